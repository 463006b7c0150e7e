# Host (numpy) against device (CuPy, torch) input on the GPU machine: one join each after a
# warm-up, lbjoin; prints the times, the bytes of points and result uploaded, and the result type.
# Run with the CUDA build of the package installed (scripts/device-python.sh installs it).
import time
import numpy as np, cupy, torch, epsjoin

rng = np.random.default_rng(0)
for n, d in ((2_000_000, 2), (1_000_000, 8)):
    X = rng.exponential(1 / 40, (n, d))
    a, b = rng.integers(0, n, 200_000), rng.integers(0, n, 200_000)
    eps = float(np.quantile(np.sqrt(((X[a] - X[b]) ** 2).sum(1)), 50 / n))
    inputs = {"numpy": X, "cupy": cupy.asarray(X), "torch": torch.from_numpy(X).cuda()}
    for name, Z in inputs.items():
        epsjoin.neighbor_table(Z, eps, engine="lbjoin")  # warm-up
        torch.cuda.synchronize(); cupy.cuda.Device().synchronize()
        t = time.perf_counter()
        (indptr, indices, s) = epsjoin.neighbor_table(Z, eps, engine="lbjoin", return_stats=True)
        t_table = time.perf_counter() - t
        t = time.perf_counter()
        G, s2 = epsjoin.neighbor_graph(Z, eps, engine="lbjoin", return_stats=True)
        t_graph = time.perf_counter() - t
        print(f"Expo{d}D {n} eps {eps:.5f} S {s['pairs']/n:.1f} {name:5s}: neighbor_table {t_table:.3f} s"
              f" (join {s['seconds']:.3f} s, h2d_point_bytes {s['h2d_point_bytes']}, "
              f"h2d_result_bytes {s['h2d_result_bytes']}), neighbor_graph {t_graph:.3f} s, "
              f"result type {type(G).__module__}.{type(G).__name__}", flush=True)
