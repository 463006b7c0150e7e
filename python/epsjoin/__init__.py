from epsjoin._epsjoin import *
