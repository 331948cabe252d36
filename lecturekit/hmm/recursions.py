r"""The recursions of a categorical hidden Markov model, run on many sequences at once.

:class:`lecturekit.hmm.CategoricalHMM` checks its input column and lengths with
:func:`_symbols` and :func:`_lengths`, and calls these on arrays: :func:`forward_backward`
(the forward recursion with one normaliser per step, the backward recursion with the same
normalisers, the posteriors and the expected counts of Baum–Welch's E-step) and
:func:`viterbi` in log space.

**Layout.** The sequences are sorted by length, longest first, and regrouped *time-major*: all
first symbols, then all second symbols, and so on (:class:`_Layout`). At time step :math:`t` the
sequences still running are then a prefix of those running at :math:`t - 1`, so one step of a
recursion is one matrix product for all of them,

.. math::

    \alpha_t = \bigl(\alpha_{t-1}[{:}n_t]\, A\bigr) \odot B_{x_t}
    \qquad\text{an } (n_t, K) \times (K, K) \text{ product,}

and the Python loop runs over the time steps of the longest sequence, never over the sequences
or the states. Sequences are processed in batches of at most :data:`BATCH_SIZE` symbols (more
when one sequence is longer), so that memory stays proportional to the batch.

**Scaling.** The forward variables are normalised at every step,
:math:`\hat\alpha_t = \alpha_t / c_t` with :math:`c_t = \sum_k \alpha_t(k)`, so that
:math:`\log p(x) = \sum_t \log c_t`; the backward variables are divided by the same
:math:`c_{t+1}`, and then :math:`\hat\alpha_t \odot \hat\beta_t` is the posterior of the state at
:math:`t` (Rabiner, 1989, section V.A). Nothing underflows, whatever the length.

Derived in notebooks/06.02-Forward-Backward-and-Baum-Welch.ipynb (forward-backward and
Baum–Welch) and notebooks/06.01-Hidden-Markov-Models-and-Viterbi.ipynb (Viterbi).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Largest number of symbols regrouped at once (a longer sequence is a batch of its own).
BATCH_SIZE = 1 << 16


# --------------------------------------------------------------------------- input


def _symbols(X: ArrayLike, n_features: int | None, where: str) -> NDArray[np.intp]:
    """The symbols of the column X as a 1-D array, checked: integers in 0..n_features - 1."""
    array = np.asarray(X)
    if array.ndim != 2 or array.shape[1] != 1 or array.shape[0] == 0:
        raise ValueError(
            f"X must be a non-empty column of symbol indices, shape (n_samples, 1), as hmmlearn "
            f"takes it; got shape {array.shape} in {where}. Reshape a 1-D array with "
            f"X.reshape(-1, 1), or encode token sequences with sequences_to_column."
        )
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(f"X contains NaN in {where}; every entry must be a symbol index 0..n_features - 1.")
    if array.dtype.kind not in "iu":
        raise ValueError(
            f"X must hold integer symbol indices; got dtype {array.dtype} in {where}. Encode "
            f"tokens with sequences_to_column, or convert whole numbers with X.astype(int)."
        )
    symbols = array[:, 0].astype(np.intp)
    low, high = int(symbols.min()), int(symbols.max())
    if low < 0 or (n_features is not None and high >= n_features):
        bad = low if low < 0 else high
        top = "n_features - 1" if n_features is None else n_features - 1
        raise ValueError(
            f"X holds the symbol {bad} in {where}, outside 0..{top} "
            f"(the model's n_features = {n_features}). Map unseen tokens to an '<unk>' symbol "
            f"(sequences_to_column does, when the vocabulary has '<unk>'), or refit with "
            f"n_features = {high + 1}."
        )
    return symbols


def _lengths(lengths: ArrayLike | None, n_samples: int) -> NDArray[np.intp]:
    """The sequences' lengths, checked: positive integers that sum to n_samples."""
    if lengths is None:
        return np.array([n_samples], dtype=np.intp)
    array = np.asarray(lengths)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise ValueError(
            f"lengths must be a non-empty 1-D sequence of integers (one per sequence); got "
            f"{array.dtype} of shape {array.shape}. Pass None for a single sequence."
        )
    if (array <= 0).any():
        position = int(np.flatnonzero(array <= 0)[0])
        raise ValueError(
            f"lengths[{position}] = {int(array[position])}: every sequence needs at least one "
            f"symbol (an empty sequence has no likelihood and no path). Drop empty sequences "
            f"before encoding them."
        )
    if int(array.sum()) != n_samples:
        raise ValueError(
            f"lengths sum to {int(array.sum())} but X has {n_samples} rows; they must sum to "
            f"len(X) (sequences_to_column returns a matching pair)."
        )
    return array.astype(np.intp)


# --------------------------------------------------------------------------- layout


class _Layout:
    """Sequences of one batch regrouped time-major: step t is the rows from ``start[t]`` on.

    Parameters
    ----------
    starts, lengths : ndarray of int
        Where each sequence of the batch starts in X and its length, longest first.

    Attributes
    ----------
    index : ndarray of shape (n,)
        ``X[index]`` is the batch in time-major order.
    running : ndarray of shape (T,)
        Number of sequences with more than ``t`` symbols; non-increasing.
    start : ndarray of shape (T + 1,)
        First row of each time step (and the number of rows at the end).
    prev : ndarray of shape (n - n_sequences,)
        For every row after the first time step, the row of the same sequence one step earlier.
    """

    def __init__(self, starts: NDArray[np.intp], lengths: NDArray[np.intp]):
        n_steps = int(lengths[0])
        ended = np.cumsum(np.bincount(lengths, minlength=n_steps + 1))[:n_steps]
        self.running = lengths.size - ended
        self.start = np.concatenate(([0], np.cumsum(self.running)))
        self.index = np.concatenate([starts[:count] + t for t, count in enumerate(self.running)])
        self.prev = np.concatenate(
            [self.start[t - 1] + np.arange(self.running[t]) for t in range(1, n_steps)] or [np.empty(0, np.intp)]
        )
        self.n_sequences = lengths.size

    def steps(self) -> Iterator[tuple[int, int, int]]:
        """``(t, first row, number of rows)`` of each time step, in time order."""
        for t, count in enumerate(self.running.tolist()):
            yield t, int(self.start[t]), count


def layouts(lengths: NDArray[np.intp], batch_size: int = BATCH_SIZE) -> list[_Layout]:
    """The batches of the sequences with these lengths, each regrouped by :class:`_Layout`.

    Longest first, each batch takes as many sequences as fit in ``batch_size`` symbols (at
    least one): a search in the running total per batch, no loop over the sequences.
    """
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    order = np.argsort(-lengths, kind="stable")
    total = np.cumsum(lengths[order])
    batches, first = [], 0
    while first < order.size:
        before = int(total[first - 1]) if first else 0
        end = max(int(np.searchsorted(total, before + batch_size, side="right")), first + 1)
        batches.append(order[first:end])
        first = end
    return [_Layout(starts[batch], lengths[batch]) for batch in batches]


def forward(
    startprob: NDArray[np.float64], transmat: NDArray[np.float64], frame: NDArray[np.float64], layout: _Layout
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Scaled forward recursion: the normalised :math:`\hat\alpha` and the normalisers :math:`c`.

    ``frame`` holds :math:`p(x_t \mid y_t = k)` for every row of the layout. A step where every
    state has probability 0 (the sequence is impossible under the model) gets :math:`c_t = 0`
    and :math:`\hat\alpha_t = 0`, without a warning; its log-likelihood is then :math:`-\infty`.
    """
    alpha = np.zeros_like(frame)
    scale = np.empty(frame.shape[0])
    for t, first, count in layout.steps():
        rows = slice(first, first + count)
        if t == 0:
            step = frame[rows] * startprob
        else:
            previous = layout.start[t - 1]
            step = (alpha[previous : previous + count] @ transmat) * frame[rows]
        scale[rows] = step.sum(axis=1)
        np.divide(step, scale[rows, None], out=alpha[rows], where=scale[rows, None] > 0)
    return alpha, scale


def backward(
    transmat: NDArray[np.float64], frame: NDArray[np.float64], scale: NDArray[np.float64], layout: _Layout
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Scaled backward recursion: :math:`\hat\beta` and the weighted emissions :math:`g`.

    :math:`g_t = b_{x_t} \odot \hat\beta_t / c_t`, and :math:`\hat\beta_t = A\, g_{t+1}` for
    a sequence that goes on after :math:`t`, 1 at its last step. ``g`` (rows of the first time
    step unused) is what the expected transition counts need; every normaliser must be positive
    (the caller checks).
    """
    beta = np.empty_like(frame)
    weighted = np.empty_like(frame)
    n_steps = layout.running.size
    last = layout.start[n_steps - 1]
    beta[last:] = 1.0
    for t in range(n_steps - 2, -1, -1):
        first, next_first = int(layout.start[t]), int(layout.start[t + 1])
        going_on = int(layout.running[t + 1])
        rows = slice(next_first, next_first + going_on)
        weighted[rows] = frame[rows] * beta[rows] / scale[rows, None]
        beta[first : first + going_on] = weighted[rows] @ transmat.T
        beta[first + going_on : next_first] = 1.0
    return beta, weighted


def _posteriors(alpha: NDArray[np.float64], beta: NDArray[np.float64]) -> NDArray[np.float64]:
    """The state posteriors :math:`\\hat\\alpha_t \\odot \\hat\\beta_t`, each row normalised."""
    gamma = alpha * beta
    gamma /= gamma.sum(axis=1, keepdims=True)
    return gamma


def expected_transitions(
    transmat: NDArray[np.float64], alpha: NDArray[np.float64], weighted: NDArray[np.float64], layout: _Layout
) -> NDArray[np.float64]:
    r"""Expected transition counts, :math:`\sum_t \xi_t(k, l)`.

    :math:`\sum_t \xi_t(k, l) = A_{kl} \sum_t \hat\alpha_t(k)\, g_{t+1}(l)`: one
    (K, m) @ (m, K) product over the m rows after the first time step.
    """
    later = slice(layout.n_sequences, alpha.shape[0])
    return transmat * (alpha[layout.prev].T @ weighted[later])


def emission_counts(gamma: NDArray[np.float64], symbols: NDArray[np.intp], n_features: int) -> NDArray[np.float64]:
    """Expected emission counts, shape (K, n_features): one bincount over (symbol, state) keys."""
    n_components = gamma.shape[1]
    keys = (symbols[:, None] * n_components + np.arange(n_components)).ravel()
    counts = np.bincount(keys, weights=gamma.ravel(), minlength=n_features * n_components)
    return counts.reshape(n_features, n_components).T


def forward_backward(
    startprob: NDArray[np.float64],
    transmat: NDArray[np.float64],
    emissionprob: NDArray[np.float64],
    symbols: NDArray[np.intp],
    layouts: list[_Layout],
    *,
    posteriors: bool,
    stats: bool,
) -> tuple[float, NDArray[np.float64] | None, dict | None]:
    """Forward (and backward) over every batch: the total log-likelihood, the posteriors in the
    order of ``symbols`` (if ``posteriors``) and the expected counts of Baum–Welch's E-step,
    ``{"start", "trans", "obs"}`` (if ``stats``).

    Posteriors and counts need every sequence to have a positive probability: ValueError if not.
    """
    table = np.ascontiguousarray(emissionprob.T)
    k, n_features = emissionprob.shape
    gamma_out = np.empty((symbols.size, k)) if posteriors else None
    counts = {"start": np.zeros(k), "trans": np.zeros((k, k)), "obs": np.zeros((k, n_features))} if stats else None
    log_prob = 0.0
    for layout in layouts:
        batch = symbols[layout.index]
        frame = table[batch]
        alpha, scale = forward(startprob, transmat, frame, layout)
        with np.errstate(divide="ignore"):  # log 0 = -inf: an impossible sequence
            log_prob += float(np.log(scale).sum())
        if not (posteriors or stats):
            continue
        if not (scale > 0).all():
            raise ValueError(
                "A sequence has probability 0 under the model (a symbol its states cannot emit, "
                "or a transition of probability 0), so its state posteriors are undefined; "
                "smooth the probabilities (fit_supervised with k > 0, or priors above 1)."
            )
        beta, weighted = backward(transmat, frame, scale, layout)
        gamma = _posteriors(alpha, beta)
        if posteriors:
            gamma_out[layout.index] = gamma
        if stats:
            counts["start"] += gamma[: layout.n_sequences].sum(axis=0)
            counts["trans"] += expected_transitions(transmat, alpha, weighted, layout)
            counts["obs"] += emission_counts(gamma, batch, n_features)
    return log_prob, gamma_out, counts


def viterbi(
    log_startprob: NDArray[np.float64],
    log_transmat: NDArray[np.float64],
    log_frame: NDArray[np.float64],
    layout: _Layout,
) -> tuple[float, NDArray[np.intp]]:
    r"""Viterbi in log space: the summed log-probability of the best paths and the paths.

    :math:`\delta_t(k) = \max_l \bigl(\delta_{t-1}(l) + \log A_{lk}\bigr) + \log B_{k x_t}`.
    Here the arrays are *state-major*: ``log_frame`` has shape (K, n), one column per row of the
    layout, and so has :math:`\delta`, so that one step builds a (K, K, n_t) array whose last
    axis runs over the sequences (long, contiguous loops) and takes the maximum over its first
    axis (K contiguous slabs). No back-pointers are stored: the backtrack recomputes, for the one
    state :math:`\hat y_{t+1}` of each sequence,
    :math:`\operatorname{argmax}_l \delta_t(l) + \log A_{l \hat y_{t+1}}` (the first maximum, as
    hmmlearn). Each path ends in the argmax of its last :math:`\delta`. States are in the
    layout's row order.
    """
    delta = np.empty_like(log_frame)
    k = log_frame.shape[0]
    scores = np.empty((k, k, layout.n_sequences))
    for t, first, count in layout.steps():
        rows = slice(first, first + count)
        if t == 0:
            np.add(log_startprob[:, None], log_frame[:, rows], out=delta[:, rows])
            continue
        previous = int(layout.start[t - 1])
        np.add(delta[:, None, previous : previous + count], log_transmat[:, :, None], out=scores[:, :, :count])
        np.add(scores[:, :, :count].max(axis=0), log_frame[:, rows], out=delta[:, rows])
    path = np.empty(log_frame.shape[1], dtype=np.intp)
    state = np.empty(layout.n_sequences, dtype=np.intp)
    log_prob = 0.0
    n_steps = layout.running.size
    for t in range(n_steps - 1, -1, -1):
        first, count = int(layout.start[t]), int(layout.running[t])
        going_on = int(layout.running[t + 1]) if t + 1 < n_steps else 0
        if going_on:
            step = delta[:, first : first + going_on] + log_transmat[:, state[:going_on]]
            state[:going_on] = step.argmax(axis=0)
        ending = delta[:, first + going_on : first + count]
        state[going_on:count] = ending.argmax(axis=0)
        log_prob += float(ending.max(axis=0).sum())
        path[first : first + count] = state[:count]
    return log_prob, path
