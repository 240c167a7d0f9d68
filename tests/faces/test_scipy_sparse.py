"""autodev.scipy.sparse (+ linalg) against scipy.sparse on every device."""

from __future__ import annotations

import numpy
import pytest
import scipy.sparse
import scipy.sparse.linalg

import autodev
from autodev.scipy import sparse
from autodev.scipy.sparse import linalg as splinalg
from autodev.testing import simulated_gpu
from scipy_check import DTYPES, TOL, same, sample


def host(n: int = 30, density: float = 0.2, dtype: str = "float64", fmt: str = "csr",
         seed: int = 0) -> scipy.sparse.csr_matrix:
    m = scipy.sparse.random(n, n, density=density, format=fmt, random_state=seed)
    if numpy.dtype(dtype).kind == "c":
        m = m + 1j * scipy.sparse.random(n, n, density=density, format=fmt,
                                         random_state=seed + 1)
    return m.astype(dtype).asformat(fmt)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_products(device, dtype, fmt):
    s, t = host(dtype=dtype, fmt=fmt), host(dtype=dtype, fmt=fmt, seed=5)
    x = sample((30,), dtype)
    a, b = sparse.csr_matrix(s).asformat(fmt), sparse.csr_matrix(t).asformat(fmt)
    tol = TOL[dtype]
    same(a @ autodev.array(x), s @ x, device, tol)
    same(a @ b, s @ t, device, tol)
    same(autodev.array(x) @ a, x @ s, device, tol)
    same(a @ autodev.array(numpy.stack([x, x], 1)), s @ numpy.stack([x, x], 1), device, tol)
    same(a * 2.0, s * 2.0, None, tol)
    same(a + b, s + t, None, tol)
    same(a.T, s.T, None, tol)
    same(a.multiply(b), s.multiply(t), None, tol)
    same(a.toarray(), s.toarray(), None, tol)
    same(a.diagonal(), s.diagonal(), None, tol)
    numpy.testing.assert_allclose(numpy.asarray(autodev.testing.to_numpy(a.sum(axis=0))),
                                  numpy.asarray(s.sum(axis=0)), rtol=tol)


def test_mixed_dtypes_promote_as_scipy(device):
    s = host(dtype="float32")
    x = sample((30,), "float64")
    same(sparse.csr_matrix(s) @ autodev.array(x), s @ x, device)


def test_array_flavour_semantics(device):
    s, t = scipy.sparse.csr_array(host()), scipy.sparse.csr_array(host(seed=3))
    a, b = sparse.csr_array(s), sparse.csr_array(t)
    assert isinstance(a @ b, sparse.sparray)
    same(a * b, s * t)  # elementwise for arrays
    m, n = sparse.csr_matrix(host()), sparse.csr_matrix(host(seed=3))
    same(m * n, host() * host(seed=3), None)  # matrix product for matrices


def test_integers_stay_on_cpu():
    s = scipy.sparse.random(20, 20, density=0.2, format="csr", random_state=0,
                            data_rvs=lambda k: numpy.arange(k)).astype(numpy.int64)
    with simulated_gpu(), autodev.policy("gpu"), autodev.trace() as t:
        r = sparse.csr_matrix(s) @ sparse.csr_matrix(s)
    assert r.location == autodev.Device("cpu") and "capability" in t[-1].reason
    same(r, s @ s)


def test_predicates_and_module_functions():
    a = sparse.random(10, 10, density=0.3, random_state=0)
    assert sparse.issparse(a) and sparse.isspmatrix(a) and sparse.isspmatrix_coo(a)
    assert not sparse.isspmatrix(sparse.csr_array(a))
    assert sparse.issparse(scipy.sparse.eye(3)) and not sparse.issparse(numpy.eye(3))
    k = sparse.kron(a, sparse.eye(2))
    assert isinstance(k, sparse.spmatrix)
    same(k, scipy.sparse.kron(a.get(), scipy.sparse.eye(2)))
    same(sparse.vstack([a, a]), scipy.sparse.vstack([a.get(), a.get()]))
    same(sparse.block_diag([a, a]), scipy.sparse.block_diag([a.get(), a.get()]))
    same(sparse.diags([1.0, 2.0], [0, 1], shape=(3, 3)),
         scipy.sparse.diags([1.0, 2.0], [0, 1], shape=(3, 3)))
    same(a.tolil().tocsr(), a.get().tocsr())


def test_scipy_functions_accept_autodev_matrices():
    s = (host() + scipy.sparse.eye(30) * 5).tocsr()
    a = sparse.csr_matrix(s)
    same(scipy.sparse.csr_matrix(a), s)
    b = numpy.ones(30)
    x, info = scipy.sparse.linalg.gmres(a, b, rtol=1e-12)
    numpy.testing.assert_allclose(x, scipy.sparse.linalg.spsolve(s, b), rtol=1e-8)


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
def test_writes_bump_the_version():
    with simulated_gpu() as sim, autodev.policy("gpu"):
        s = host()
        a = sparse.csr_matrix(s)
        x = autodev.ones(30)
        a @ x
        a.data[0] = 100.0  # a write through the data view
        s.data[0] = 100.0
        same(a @ x, s @ numpy.ones(30))
        a[0, 0] = 7.0
        s[0, 0] = 7.0
        same(a @ x, s @ numpy.ones(30))
        assert sim.h2d >= 3


@pytest.mark.filterwarnings("ignore::scipy.sparse.SparseEfficiencyWarning")
def test_a_write_through_a_view_releases_the_matrix_mirror_at_once():
    from autodev._residency import storage as _residency

    with simulated_gpu() as sim, autodev.policy("gpu"):
        s = host()
        a = sparse.csr_matrix(s)
        x = autodev.ones(30)
        a @ x  # a's GPU copy stays behind as its mirror
        assert autodev.residency(a)["mirrors"] == [sim.device]
        a.data[0] = 100.0  # a write through the data view, not through a
        s.data[0] = 100.0
        # the stale mirror's device memory is released now, not when a is next read
        assert a._mirror is None and id(a) not in _residency._MIRRORED
        assert autodev.residency(a)["mirrors"] == []
        same(a @ x, s @ numpy.ones(30))


def test_to_device_of_a_mirrored_matrix_owns_its_data():
    with simulated_gpu() as sim, autodev.policy("gpu"):
        s = host()
        a = sparse.csr_matrix(s)
        a @ autodev.ones(30)  # a mirror on the GPU
        b = a.to_device(sim.device)
        b.data[...] = 0.0  # writes b only: the mirror a reads stays a's
        assert autodev.residency(a)["mirrors"] == [sim.device]
        same(a @ autodev.ones(30), s @ numpy.ones(30))
        same(b.toarray(), numpy.zeros((30, 30)))
        c = b.to_device("cpu")
        assert c.location == "cpu"
        same(c.toarray(), numpy.zeros((30, 30)))


def test_matvec_loop_moves_the_matrix_once():
    s = host(n=200, density=0.05)
    a = sparse.csr_matrix(s)
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.ones(200) / 200
        autodev.stats(reset=True)
        for _ in range(50):
            x = a @ x
            x = x / x.sum()
        stats = autodev.stats()
        assert x.location == sim.device
        assert stats["h2d_count"] == 1  # the matrix, once (x is made on the device)
        assert stats["h2d_bytes"] == a.nbytes
        x = x.get()
    expected = numpy.ones(200) / 200
    for _ in range(50):
        expected = s @ expected
        expected = expected / expected.sum()
    same(x, expected, None, 1e-12)


def test_reference_csr_matmul_dispatches():
    """REFERENCE: CSR @ CSR at density 0.01, float32: small on the CPU, a decision traced."""
    s = scipy.sparse.random(100, 100, density=0.01, format="csr", dtype="float32",
                            random_state=0)
    a = sparse.csr_matrix(s)
    with simulated_gpu(), autodev.trace() as t:
        r = a @ a
    assert t[-1].op == "scipy.sparse.matmul" and t[-1].reason == "cost model"
    assert t[-1].costs and r.location == autodev.Device("cpu")
    same(r, s @ s)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_linalg(device, dtype):
    r = host(n=40, density=0.1, dtype=dtype)
    s = (r + r.T + scipy.sparse.eye(40, dtype=dtype) * 10).tocsr().astype(dtype)
    b = numpy.ones(40, dtype)
    a, bb = sparse.csr_matrix(s), autodev.array(b)
    tol = 1e-4 if dtype == "float32" else 1e-9
    same(splinalg.spsolve(a, bb), scipy.sparse.linalg.spsolve(s.tocsc(), b), device, tol)
    for name in ("cg", "gmres", "minres"):
        x, info = getattr(splinalg, name)(a, bb, rtol=1e-10)
        ex, einfo = getattr(scipy.sparse.linalg, name)(s, b, rtol=1e-10)
        assert info == einfo
        same(x, ex, device, tol, tol)
    w = splinalg.eigsh(a, k=3, return_eigenvectors=False)
    same(w, scipy.sparse.linalg.eigsh(s, k=3, return_eigenvectors=False), device, tol)
    sv = splinalg.svds(a, k=3, return_singular_vectors=False)
    same(sv, scipy.sparse.linalg.svds(s, k=3, return_singular_vectors=False), device, tol)
    same(splinalg.norm(a), scipy.sparse.linalg.norm(s), None, tol)
    x = splinalg.lsqr(a, bb)[0]
    same(x, scipy.sparse.linalg.lsqr(s, b)[0], autodev.Device("cpu"), tol)
    op = splinalg.aslinearoperator(a)
    numpy.testing.assert_allclose(op.matvec(b), s @ b, rtol=tol)
