"""scikit-learn with ``array_api_dispatch=True`` over autodev arrays, against NumPy.

Run as ``python tests/sklearn_check.py SETTING`` (``cpu``, ``sim-auto`` or
``sim-gpu``) with ``SCIPY_ARRAY_API=1`` in the environment (scikit-learn requires
it, and SciPy reads it once, at import). Prints one JSON object: per call, whether
the result equals NumPy's, its type, namespace and device. Under ``sim-gpu`` the
inputs are placed on the simulated GPU, so fit and predict see one device.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from typing import Any, Callable, Iterator

import numpy
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
        yield "sim:0" if name == "sim-gpu" else None


def describe(result: Any, expected: Any) -> dict[str, Any]:
    """Whether ``result`` equals NumPy's ``expected``, and what it is."""
    is_array = isinstance(result, autodev.ndarray)
    values = to_numpy(result) if is_array else result
    return {
        "equal": bool(numpy.allclose(values, expected, rtol=1e-7, atol=1e-9)),
        "type": type(result).__name__,
        "namespace": result.__array_namespace__().__name__ if is_array else None,
        "device": str(result.device) if is_array else None,
        "shape": list(numpy.shape(values)),
    }


def main(name: str) -> dict[str, Any]:
    X, y, t = data()
    report = {}
    with setting(name) as device, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn's "solver auto means svd here" note
        for case, run in CASES.items():
            expected = run(numpy, X, y, t)
            inputs = [autodev.asarray(a, device=device) for a in (X, y, t)]
            xp = inputs[0].__array_namespace__()
            with sklearn.config_context(array_api_dispatch=True):
                report[case] = describe(run(xp, *inputs), expected)
    return report


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
