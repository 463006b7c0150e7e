"""epsjoin.plan_slabs: the library's slab planner from Python (issue 47's plan). Slabs of like
work, and halos with which slabs joined apart give exactly the one-node pairs, ties at eps
included."""

import numpy as np
import pytest

import epsjoin
from conftest import eps_for, lattice


def _halo_by_loop(plan, x):
    """The library's rule (box_partition::halo_boxes), point by point."""
    cuts, first, last = plan.cuts, [], []
    reach = lambda c: plan.eps * (1 + 1e-6) + 1e-6 * abs(c)  # noqa: E731
    for v in x:
        home = int(np.searchsorted(cuts, v, side="right"))
        f = home
        while f > 0 and v <= cuts[f - 1] + reach(cuts[f - 1]):
            f -= 1
        last_ = home
        while last_ + 1 < len(cuts) + 1 and v >= cuts[last_] - reach(cuts[last_]):
            last_ += 1
        first.append(f)
        last.append(last_)
    return np.array(first), np.array(last)


def _slabs_joined_apart(X, eps, plan):
    """Each slab's own points against its own and halo points, the pairs whose smaller id the
    slab owns: what a Dask worker would emit."""
    own = plan.slab_of(X)
    first, last = plan.halo_slabs(X)
    found = []
    for r in range(plan.n_slabs):
        mine = np.nonzero(own == r)[0]
        near = np.nonzero((first <= r) & (r <= last))[0]  # own points and halo, ascending
        if mine.size == 0:
            continue
        p = epsjoin.pairs(X[mine], eps, X[near])
        i, j = mine[p[:, 0]], near[p[:, 1]]
        keep = i < j
        found.append(np.stack([i[keep], j[keep]], axis=1))
    p = np.concatenate(found) if found else np.empty((0, 2), np.int64)
    return p[np.lexsort((p[:, 1], p[:, 0]))]


@pytest.mark.parametrize("d", [1, 2, 3, 5])
@pytest.mark.parametrize("slabs", [1, 2, 4, 7])
def test_slabs_joined_apart_give_the_one_node_pairs(d, slabs, rng):
    X = np.vstack([rng.random((3000, d)), rng.random((3000, d)) * 0.2])  # a dense corner
    eps = eps_for(X, 15, rng)
    plan = epsjoin.plan_slabs(X, eps, slabs)
    assert plan.n_slabs == slabs and np.all(np.diff(plan.cuts) >= 0)
    np.testing.assert_array_equal(_slabs_joined_apart(X, eps, plan),
                                  epsjoin.pairs(X, eps, sort=True))


def test_ties_at_eps_across_the_cuts():
    L = lattice(20, 2)  # unit spacing: pairs at exactly eps = 1 across every cut
    for slabs in (2, 3, 5):
        plan = epsjoin.plan_slabs(L, 1.0, slabs)
        np.testing.assert_array_equal(_slabs_joined_apart(L, 1.0, plan),
                                      epsjoin.pairs(L, 1.0, sort=True))
        # A point exactly at a cut, or a cut plus eps, is in the halo the rule says.
        x = np.concatenate([plan.cuts, plan.cuts + 1.0, plan.cuts - 1.0, plan.cuts + 1.0 + 1e-5])
        got = plan.halo_slabs(x)
        want = _halo_by_loop(plan, x)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_the_halo_rule_is_the_librarys(rng):
    X = rng.normal(size=(2000, 3))
    plan = epsjoin.plan_slabs(X, 0.05, 9)
    x = np.concatenate([X[:, plan.dim], plan.cuts, rng.uniform(-4, 4, 500)])
    for got, want in zip(plan.halo_slabs(x), _halo_by_loop(plan, x)):
        np.testing.assert_array_equal(got, want)
    home = plan.slab_of(x)
    first, last = plan.halo_slabs(x)
    assert np.all((first <= home) & (home <= last))


def test_slabs_have_like_work_where_the_density_varies(rng):
    X = np.vstack([rng.random((40_000, 2)), rng.random((40_000, 2)) * [0.1, 1.0]])
    eps = 0.01
    plan = epsjoin.plan_slabs(X, eps, 4)
    counts = epsjoin.count(X, eps, per_row=True)
    slab = plan.slab_of(X)
    work = np.array([(counts[slab == r] + 700).sum() for r in range(4)], dtype=float)
    assert work.max() / work.mean() < 1.05
    # Point counts are far from equal: the slabs follow the work, not the points.
    points = np.bincount(slab, minlength=4)
    assert points.max() / points.min() > 1.1


def test_a_sample_standing_for_more_points_and_refusals(rng):
    X = rng.random((5000, 2)) * [3.0, 1.0]  # the widest coordinate is 0, the one cut
    whole = epsjoin.plan_slabs(X, 0.02, 3)
    sampled = epsjoin.plan_slabs(X[::5], 0.02, 3, n_points=len(X))
    assert sampled.dim == whole.dim == 0
    np.testing.assert_allclose(sampled.cuts, whole.cuts, atol=0.15)
    assert epsjoin.plan_slabs(X, 0.02, 1).cuts.shape == (0,)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="n_slabs"):
            epsjoin.plan_slabs(X, 0.02, bad)
    for eps in (0.0, np.inf):
        with pytest.raises(ValueError, match="eps"):
            epsjoin.plan_slabs(X, eps, 2)
    with pytest.raises(ValueError, match="n_points"):
        epsjoin.plan_slabs(X, 0.02, 2, n_points=10)
    with pytest.raises(ValueError, match="NaN"):
        epsjoin.plan_slabs(np.array([[0.0, np.nan], [1.0, 1.0]]), 0.1, 2)
    assert "SlabPlan(dim=" in repr(whole)


@pytest.mark.parametrize("cuts", [[], [0.5], [0.2, 0.2, 0.7], "many"])
def test_each_points_slabs_are_binary_searches_of_the_cuts(cuts, rng):
    # Few cuts are counted by comparisons, many by searchsorted: both give a point's slab and
    # its halo slabs exactly, for points on a cut, at a cut +- eps and at the reach's edge.
    cuts = np.sort(rng.random(40)) if cuts == "many" else np.array(cuts, dtype=np.float64)
    plan = epsjoin.SlabPlan(0, cuts, 0.05)
    upper, lower = plan._upper, plan._lower  # each cut's reach above and below it
    x = np.concatenate([rng.random(20_000), cuts, cuts + 0.05, cuts - 0.05, upper, lower,
                        np.nextafter(upper, np.inf), np.nextafter(lower, -np.inf)])
    home = np.searchsorted(cuts, x, side="right")
    first, last = plan.halo_slabs(x[:, None])
    np.testing.assert_array_equal(plan.slab_of(x[:, None]), home)
    np.testing.assert_array_equal(
        first, np.minimum(home, np.searchsorted(upper, x, side="left")))
    np.testing.assert_array_equal(
        last, np.maximum(home, np.searchsorted(lower, x, side="right")))
    assert first.dtype == last.dtype == np.int64
    # In another slab's halo: its halo slabs reach past its own on either side.
    np.testing.assert_array_equal(plan.in_other_halos(x[:, None]), (first < home) | (last > home))
