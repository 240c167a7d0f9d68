"""k-means clustering (Lloyd's algorithm) with broadcasting, argmin and masked means."""
import numpy as np

rng = np.random.default_rng(7)
centres_true = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
points = np.concatenate([c + rng.standard_normal((80, 2)) for c in centres_true])
centres = points[[0, 100, 200]].copy()
for it in range(12):
    d = ((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    labels = d.argmin(axis=1)
    for j in range(3):
        members = points[labels == j]
        centres[j] = members.mean(axis=0)
    inertia = d[np.arange(len(points)), labels].sum()
    if it % 4 == 0:
        print(f"iteration {it}: inertia {inertia:.6f}")
order = np.argsort(centres[:, 0] + 10 * centres[:, 1], kind="stable")
print(np.round(centres[order], 6))
print(np.bincount(labels, minlength=3).tolist())
