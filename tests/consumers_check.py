"""scikit-learn (``array_api_dispatch=True``) and SciPy over autodev arrays, against NumPy.

Run as ``python tests/consumers_check.py SETTING`` (``cpu``, ``sim-auto`` or
``sim-gpu``) with ``SCIPY_ARRAY_API=1`` in the environment (scikit-learn requires
it, and SciPy reads it once, at import). Prints one JSON object: per library and
call, whether the result equals NumPy's, its type, namespace and device. Under
``sim-gpu`` the inputs are placed on the simulated GPU, so fit and predict see one
device.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from typing import Any, Callable, Iterator

import numpy
import scipy.fft
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats
import sklearn
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, f1_score, log_loss, r2_score
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import autodev
from autodev.testing import simulated_gpu, to_numpy

Case = Callable[[Any, Any, Any, Any], Any]

CASES: dict[str, Case] = {
    "PCA(full)": lambda xp, X, y, t: PCA(2, svd_solver="full").fit_transform(X),
    "PCA(randomized)": lambda xp, X, y, t: PCA(
        2, svd_solver="randomized", random_state=0, power_iteration_normalizer="QR"
    ).fit_transform(X),
    "Ridge(svd)": lambda xp, X, y, t: Ridge(solver="svd").fit(X, t).predict(X),
    "Ridge(auto)": lambda xp, X, y, t: Ridge().fit(X, t).predict(X),
    "LinearDiscriminantAnalysis": lambda xp, X, y, t: (
        LinearDiscriminantAnalysis().fit(X, y).predict(X)),
    "StandardScaler": lambda xp, X, y, t: StandardScaler().fit_transform(X),
    "MinMaxScaler": lambda xp, X, y, t: MinMaxScaler().fit_transform(X),
    "LogisticRegression": lambda xp, X, y, t: LogisticRegression().fit(X, y).predict(X),
    "LogisticRegression.predict_proba": lambda xp, X, y, t: (
        LogisticRegression().fit(X, y).predict_proba(X)),
    "f1_score": lambda xp, X, y, t: f1_score(y, xp.astype(X[:, 0] > 0.3, xp.int64)),
    "log_loss": lambda xp, X, y, t: log_loss(y, 1 / (1 + xp.exp(-X[:, 0]))),
    "r2_score": lambda xp, X, y, t: r2_score(t, 0.9 * t),
    "accuracy_score": lambda xp, X, y, t: accuracy_score(
        y, xp.astype(X[:, 0] > 0.3, xp.int64)),
}


#: SciPy functions that take autodev arrays under SCIPY_ARRAY_API=1 (X: 60x5, y, t: 60).
SCIPY_CASES: dict[str, Case] = {
    "special.erf": lambda xp, X, y, t: scipy.special.erf(X),
    "special.gammaln": lambda xp, X, y, t: scipy.special.gammaln(xp.abs(X) + 1),
    "special.xlogy": lambda xp, X, y, t: scipy.special.xlogy(xp.abs(X), xp.abs(X)),
    "special.expit": lambda xp, X, y, t: scipy.special.expit(X),
    "special.logsumexp": lambda xp, X, y, t: scipy.special.logsumexp(X, axis=0),
    "special.softmax": lambda xp, X, y, t: scipy.special.softmax(X, axis=1),
    "fft.fft": lambda xp, X, y, t: scipy.fft.fft(X, axis=0),
    "fft.rfft": lambda xp, X, y, t: scipy.fft.rfft(t),
    "fft.irfft": lambda xp, X, y, t: scipy.fft.irfft(scipy.fft.rfft(t)),
    "stats.zscore": lambda xp, X, y, t: scipy.stats.zscore(X),
    "stats.moment": lambda xp, X, y, t: scipy.stats.moment(X, 3),
    "stats.pearsonr": lambda xp, X, y, t: scipy.stats.pearsonr(X[:, 0], t).statistic,
    # SciPy computes these with NumPy whatever the namespace (see docs/array-api.md)
    "linalg.solve": lambda xp, X, y, t: scipy.linalg.solve(X[:5] + 10 * xp.eye(5), t[:5]),
    "fft.dct": lambda xp, X, y, t: scipy.fft.dct(t),
    "signal.convolve": lambda xp, X, y, t: scipy.signal.convolve(t, t[:5]),
}


def data() -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Features, class labels (from a rule the first two features decide), targets."""
    rng = numpy.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(numpy.int64)
    t = X @ numpy.arange(1.0, 6.0) + 0.1 * rng.standard_normal(60)
    return X, y, t


@contextlib.contextmanager
def setting(name: str) -> Iterator[Any]:
    """The autodev setting, yielding the device inputs are placed on (None: default)."""
    with contextlib.ExitStack() as stack:
        if name.startswith("sim"):
            stack.enter_context(simulated_gpu())
        if name == "sim-gpu":
            stack.enter_context(autodev.policy("gpu"))
        elif name == "cpu":
            stack.enter_context(autodev.policy("cpu"))
        yield None  # placed by autodev (auto): the policy decides where calls run


def describe(result: Any, expected: Any) -> dict[str, Any]:
    """Whether ``result`` equals NumPy's ``expected``, and what it is."""
    is_array = isinstance(result, autodev.ndarray)
    values = to_numpy(result) if is_array else result
    return {
        "equal": bool(numpy.allclose(values, expected, rtol=1e-7, atol=1e-9)),
        "type": type(result).__name__,
        "namespace": result.__array_namespace__().__name__ if is_array else None,
        "device": str(result.device) if is_array else None,
        "location": str(result.location) if is_array else None,
        "shape": list(numpy.shape(values)),
    }


def main(name: str) -> dict[str, Any]:
    X, y, t = data()
    report: dict[str, Any] = {"sklearn": {}, "scipy": {}}
    with setting(name) as device, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn's "solver auto means svd here" note
        inputs = [autodev.asarray(a, device=device) for a in (X, y, t)]
        xp = inputs[0].__array_namespace__()
        for case, run in CASES.items():
            expected = run(numpy, X, y, t)
            with sklearn.config_context(array_api_dispatch=True):
                report["sklearn"][case] = describe(run(xp, *inputs), expected)
        for case, run in SCIPY_CASES.items():
            report["scipy"][case] = describe(run(xp, *inputs), run(numpy, X, y, t))
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
