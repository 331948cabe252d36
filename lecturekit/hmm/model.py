r"""A hidden Markov model with categorical emissions: Viterbi, forward–backward and Baum–Welch.

The generative story of a sequence :math:`x_1, \dots, x_T` of symbols (words) with hidden states
(tags) :math:`y_1, \dots, y_T`:

.. math::

    y_1 \sim \pi, \qquad y_t \mid y_{t-1} \sim A_{y_{t-1}, \cdot}, \qquad
    x_t \mid y_t \sim B_{y_t, \cdot},

with ``startprob_`` :math:`\pi` (K,), ``transmat_`` :math:`A` (K, K) and ``emissionprob_``
:math:`B` (K, n_features). :class:`CategoricalHMM` has hmmlearn's names and input conventions: X
is a column of symbol indices, shape (n_samples, 1), and ``lengths`` splits it into sequences;
:func:`lecturekit.hmm.encoding.sequences_to_column` encodes token sequences that way. It fits by counting when the
states are seen (:meth:`CategoricalHMM.fit_supervised`, add-alpha smoothing with the pseudo-count
given as ``k``) and by Baum–Welch (EM) when they are not (:meth:`CategoricalHMM.fit`).

The recursions (:mod:`lecturekit.hmm.recursions`) run on all sequences at once, one matrix
product per time step; the forward–backward recursion is scaled and Viterbi works in log space.
``tests/lecturekit/hmm/test_model.py`` checks the log-likelihood, the posteriors, the Viterbi paths and one
Baum–Welch iteration against hmmlearn 0.3.3's ``CategoricalHMM`` to 1e-8, and Viterbi and the
likelihood against brute force over all :math:`K^T` paths; ``benchmarks/bench_hmm.py`` times
both.

Derived in notebooks/06.01-Hidden-Markov-Models-and-Viterbi.ipynb and
notebooks/06.02-Forward-Backward-and-Baum-Welch.ipynb.
"""

from __future__ import annotations

import bisect
import sys
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils import check_random_state
from threadpoolctl import ThreadpoolController

from lecturekit.estimation import add_k
from lecturekit.hmm import recursions as rec
from lecturekit.hmm.recursions import _lengths, _symbols

__all__ = ["CategoricalHMM"]

_NAMES = ("startprob_", "transmat_", "emissionprob_")
#: How far from 1 a row of probabilities set by hand may sum.
SUM_TOLERANCE = 1e-6


# --------------------------------------------------------------------------- input checks


def _probabilities(value: Any, name: str, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """A probability table set by hand or fitted, checked: shape, finite, >= 0, rows sum to 1."""
    array = np.asarray(value, dtype=np.float64)
    if array.shape != shape:
        raise ValueError(
            f"{name} has shape {array.shape}, but this model needs {shape} (n_components and n_features fix it)."
        )
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinity; every entry must be a probability.")
    if (array < 0).any():
        raise ValueError(f"{name} has a negative entry ({array.min():g}); probabilities are >= 0.")
    sums = array.sum(axis=-1)
    if not np.all(np.abs(sums - 1) <= SUM_TOLERANCE):
        raise ValueError(
            f"{name} must sum to 1 along its last axis (got sums {np.round(sums, 6)}); divide "
            f"by the sums, e.g. p / p.sum(axis=-1, keepdims=True)."
        )
    return array


def _normalize(counts: NDArray[np.float64], previous: Any) -> NDArray[np.float64]:
    """Counts divided by their sums along the last axis; a row of zero counts keeps ``previous``.

    Such a row (a state with no expected transitions out of it, e.g. only ever last in its
    sequence) has no maximum-likelihood estimate; hmmlearn leaves it at zero, which is not a
    distribution.
    """
    sums = counts.sum(axis=-1, keepdims=True)
    empty = sums == 0
    sums[empty] = 1.0
    return np.where(empty, np.asarray(previous, dtype=np.float64), counts / sums)


@cache
def _threadpools() -> ThreadpoolController:
    """The BLAS thread pools, found once (0.03 ms per limit afterwards, 1 ms to find them)."""
    return ThreadpoolController()


def _log(array: NDArray[np.float64]) -> NDArray[np.float64]:
    """Natural log with log(0) = -inf, quietly."""
    with np.errstate(divide="ignore"):
        return np.log(array)


# --------------------------------------------------------------------------- the model


class CategoricalHMM(BaseEstimator):
    r"""Hidden Markov model with categorical emissions, hmmlearn's ``CategoricalHMM`` interface.

    Parameters
    ----------
    n_components : int, default 1
        Number of hidden states K.
    n_features : int, optional
        Number of symbols; inferred from the data (largest symbol + 1) when None.
    startprob_prior, transmat_prior, emissionprob_prior : float or array_like, default 1.0
        Concentrations of Dirichlet priors on the start, transition and emission probabilities;
        Baum–Welch's M-step takes :math:`\max(\text{prior} - 1 + \text{expected count}, 0)`,
        normalised. 1.0 is maximum likelihood; values above 1 smooth (prior - 1 is added to
        every expected count), and Baum–Welch then maximises the log-likelihood plus the log
        prior :math:`\sum (\text{prior} - 1) \log \theta` (MAP estimation).
    n_iter : int, default 10
        Largest number of Baum–Welch iterations.
    tol : float, default 1e-2
        Stop when an iteration raises the objective (``objective_history_``) by less than this.
    params, init_params : str, default "ste"
        Which of ``s`` (startprob_), ``t`` (transmat_) and ``e`` (emissionprob_) Baum–Welch
        updates, and which :meth:`fit` initialises at random first (the others keep the values
        they have, e.g. from :meth:`fit_supervised` or set by hand).
    random_state : int, RandomState or None
        Seed of the random start of :meth:`fit` (drawn as hmmlearn draws it) and of
        :meth:`sample`.
    verbose : bool, default False
        Print the objective and its change after each Baum–Welch iteration to standard error.

    Attributes
    ----------
    startprob_ : ndarray of shape (n_components,)
    transmat_ : ndarray of shape (n_components, n_components)
        Row j is the distribution of the next state after state j.
    emissionprob_ : ndarray of shape (n_components, n_features)
        Row k is the distribution of the symbol emitted in state k.
    n_features : int
        Number of symbols (set by fitting when it was None).
    history_ : list of float
        Total log-likelihood of the data after each Baum–Welch iteration (under the parameters
        that iteration produced, so ``history_[-1] == score(X, lengths)``). With priors of 1.0
        it never decreases; with priors above 1 it may fall while the objective rises.
        hmmlearn's ``monitor_.history`` records the log-likelihood before each iteration's
        M-step instead, one iteration behind.
    objective_history_ : list of float
        What Baum–Welch maximises, after each iteration: the log-likelihood plus the log prior
        :math:`\sum (\text{prior} - 1) \log \theta` of the tables in ``params``, up to the
        Dirichlet normalising constants. Zeros that Baum–Welch keeps are left out: forbidden
        starts and transitions, and, with priors below 1 (whose density is unbounded, so MAP
        has no maximum), the entries the M-step clips to 0. Equal to ``history_`` when every
        prior is 1.0; with priors of at least 1 it never decreases. hmmlearn 0.3.3 watches the
        log-likelihood alone, priors or not.
    n_iter_ : int
        Number of Baum–Welch iterations run.
    converged_ : bool
        Whether the last iteration raised the objective by less than ``tol``.

    Examples
    --------
    >>> import numpy as np
    >>> model = CategoricalHMM(2, n_features=3)
    >>> model.startprob_ = np.array([0.6, 0.4])
    >>> model.transmat_ = np.array([[0.7, 0.3], [0.4, 0.6]])
    >>> model.emissionprob_ = np.array([[0.1, 0.4, 0.5], [0.6, 0.3, 0.1]])
    >>> X = np.array([[0], [1], [2], [0], [0]])
    >>> log_prob, states = model.decode(X, lengths=[3, 2])
    >>> states
    array([1, 0, 0, 1, 1])
    >>> round(model.score(X, lengths=[3, 2]), 4)
    -5.5911
    """

    def __init__(
        self,
        n_components: int = 1,
        *,
        n_features: int | None = None,
        startprob_prior: Any = 1.0,
        transmat_prior: Any = 1.0,
        emissionprob_prior: Any = 1.0,
        n_iter: int = 10,
        tol: float = 1e-2,
        params: str = "ste",
        init_params: str = "ste",
        random_state: Any = None,
        verbose: bool = False,
    ):
        self.n_components = n_components
        self.n_features = n_features
        self.startprob_prior = startprob_prior
        self.transmat_prior = transmat_prior
        self.emissionprob_prior = emissionprob_prior
        self.n_iter = n_iter
        self.tol = tol
        self.params = params
        self.init_params = init_params
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ checks

    def _n_components(self) -> int:
        k = self.n_components
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"n_components must be a positive integer; got {k!r}.")
        return int(k)

    def _parameters(self, where: str) -> tuple[NDArray[np.float64], ...]:
        """startprob_, transmat_, emissionprob_ checked (fitted or set by hand), for ``where``."""
        missing = [name for name in _NAMES if getattr(self, name, None) is None]
        if missing:
            raise NotFittedError(
                f"This CategoricalHMM has no {', '.join(missing)}: call fit or fit_supervised "
                f"before {where}, or set the probabilities by hand."
            )
        k = self._n_components()
        emission = np.asarray(self.emissionprob_)
        n_features = (
            self.n_features if self.n_features is not None else (emission.shape[1] if emission.ndim == 2 else -1)
        )
        return (
            _probabilities(self.startprob_, "startprob_", (k,)),
            _probabilities(self.transmat_, "transmat_", (k, k)),
            _probabilities(emission, "emissionprob_", (k, n_features)),
        )

    def _data(
        self, X: ArrayLike, lengths: ArrayLike | None, where: str
    ) -> tuple[tuple[NDArray[np.float64], ...], NDArray[np.intp], list[rec._Layout]]:
        parameters = self._parameters(where)
        symbols = _symbols(X, parameters[2].shape[1], where)
        return parameters, symbols, rec.layouts(_lengths(lengths, symbols.size))

    # ------------------------------------------------------------------ inference

    def _forward_backward(
        self, parameters, symbols, layouts, *, posteriors: bool, stats: bool
    ) -> tuple[float, NDArray[np.float64] | None, dict | None]:
        """Log-likelihood, and (optionally) posteriors in X's order and Baum–Welch's counts."""
        # The products are (n_t, K) @ (K, K): too small for BLAS threads to help, and on a busy
        # machine OpenBLAS's threads made a forward pass up to 30 times slower. One thread.
        with _threadpools().limit(limits=1, user_api="blas"):
            return rec.forward_backward(*parameters, symbols, layouts, posteriors=posteriors, stats=stats)

    def score(self, X: ArrayLike, lengths: ArrayLike | None = None) -> float:
        """Total log-likelihood :math:`\\sum_i \\log p(x^{(i)})` over the sequences, by the forward recursion.

        Returns ``-inf`` when a sequence is impossible under the model.

        Examples
        --------
        >>> model = CategoricalHMM(1, n_features=2)
        >>> model.startprob_, model.transmat_ = [1.0], [[1.0]]
        >>> model.emissionprob_ = [[0.25, 0.75]]
        >>> float(np.exp(model.score([[0], [1], [1]])))
        0.140625
        """
        return self._forward_backward(*self._data(X, lengths, "score"), posteriors=False, stats=False)[0]

    def score_samples(self, X: ArrayLike, lengths: ArrayLike | None = None) -> tuple[float, NDArray[np.float64]]:
        """Total log-likelihood, and the posterior :math:`p(y_t = k \\mid x)` of every state.

        Returns
        -------
        log_prob : float
        posteriors : ndarray of shape (n_samples, n_components)
            Forward–backward posteriors; each row sums to 1.

        Raises
        ------
        ValueError
            If a sequence has probability 0 under the model (its posteriors are undefined).
        """
        log_prob, gamma, _ = self._forward_backward(
            *self._data(X, lengths, "score_samples"), posteriors=True, stats=False
        )
        return log_prob, gamma

    def predict_proba(self, X: ArrayLike, lengths: ArrayLike | None = None) -> NDArray[np.float64]:
        """Posterior state probabilities by forward–backward, shape (n_samples, n_components)."""
        return self._forward_backward(*self._data(X, lengths, "predict_proba"), posteriors=True, stats=False)[1]

    def decode(self, X: ArrayLike, lengths: ArrayLike | None = None) -> tuple[float, NDArray[np.intp]]:
        """The most probable state sequence of each sequence, by Viterbi in log space.

        Returns
        -------
        log_prob : float
            Sum over the sequences of :math:`\\max_y \\log p(x, y)` (-inf if impossible).
        states : ndarray of shape (n_samples,)
            The best paths, concatenated in X's order.
        """
        (startprob, transmat, emissionprob), symbols, layouts = self._data(X, lengths, "decode")
        log_start, log_trans = _log(startprob), _log(transmat)
        log_emission = _log(emissionprob)
        states = np.empty(symbols.size, dtype=np.intp)
        log_prob = 0.0
        for layout in layouts:
            best, path = rec.viterbi(log_start, log_trans, log_emission[:, symbols[layout.index]], layout)
            log_prob += best
            states[layout.index] = path
        return log_prob, states

    def predict(self, X: ArrayLike, lengths: ArrayLike | None = None) -> NDArray[np.intp]:
        """The Viterbi states of every symbol, shape (n_samples,)."""
        return self.decode(X, lengths)[1]

    # ------------------------------------------------------------------ fitting

    def _check_hyperparameters(self) -> tuple[int, int, float]:
        k = self._n_components()
        n_iter, tol = self.n_iter, self.tol
        if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 0:
            raise ValueError(f"n_iter must be a non-negative integer; got {n_iter!r}.")
        if not np.isfinite(tol) or tol < 0:
            raise ValueError(f"tol must be a finite number >= 0; got {tol!r}.")
        for name in ("params", "init_params"):
            if not isinstance(getattr(self, name), str) or set(getattr(self, name)) - set("ste"):
                raise ValueError(f"{name} must be a string of the letters s, t and e; got {getattr(self, name)!r}.")
        for name in ("startprob_prior", "transmat_prior", "emissionprob_prior"):
            prior = np.asarray(getattr(self, name), dtype=np.float64)
            if not np.isfinite(prior).all() or (prior <= 0).any():
                raise ValueError(
                    f"{name} must be positive and finite (1.0 is maximum likelihood); got {getattr(self, name)!r}."
                )
        return k, int(n_iter), float(tol)

    def _initialize(self, k: int, n_features: int) -> None:
        """Random start as hmmlearn draws it: Dirichlet(1/K) rows, then uniform emission rows."""
        random_state = check_random_state(self.random_state)
        needs = {
            name: code in self.init_params or getattr(self, name, None) is None
            for code, name in zip("ste", _NAMES, strict=True)
        }
        if needs["startprob_"]:
            self.startprob_ = random_state.dirichlet(np.full(k, 1.0 / k))
        if needs["transmat_"]:
            self.transmat_ = random_state.dirichlet(np.full(k, 1.0 / k), size=k)
        if needs["emissionprob_"]:
            # hmmlearn draws the emissions from a second generator made from the same seed.
            draws = check_random_state(self.random_state).rand(k, n_features)
            self.emissionprob_ = draws / draws.sum(axis=1, keepdims=True)

    def _m_step(self, counts: dict) -> None:
        """The M-step with Dirichlet priors, as hmmlearn's: a start or transition probability of 0
        stays 0; a row with no counts at all keeps its previous values (see _normalize)."""
        for code, name, key in zip("ste", _NAMES, ("start", "trans", "obs"), strict=True):
            if code not in self.params:
                continue
            prior = np.asarray(getattr(self, name + "prior"), dtype=np.float64)
            updated = np.maximum(prior - 1 + counts[key], 0)
            previous = np.asarray(getattr(self, name), dtype=np.float64)
            if code != "e":  # hmmlearn keeps forbidden starts and transitions forbidden
                updated = np.where(previous == 0, 0, updated)
            setattr(self, name, _normalize(updated, previous))

    def _log_prior(self) -> float:
        """sum (prior - 1) log theta over the tables fit updates (see ``objective_history_``)."""
        total = 0.0
        for code, name in zip("ste", _NAMES, strict=True):
            if code in self.params:
                theta = np.asarray(getattr(self, name), dtype=np.float64)
                weight = np.broadcast_to(np.asarray(getattr(self, name + "prior"), dtype=np.float64) - 1, theta.shape)
                positive = theta > 0
                if code == "e" and (weight[~positive] > 0).any():
                    return -np.inf  # a zero the next M-step lifts: the prior density is 0 here
                total += float(weight[positive] @ np.log(theta[positive]))
        return total

    def _fit_features(self, X: ArrayLike, where: str) -> tuple[NDArray[np.intp], int]:
        """Symbols of X and n_features: given, else a kept emissionprob_'s, else max + 1."""
        n_features = self.n_features
        kept = getattr(self, "emissionprob_", None)
        if n_features is None and kept is not None and "e" not in self.init_params and where == "fit":
            n_features = np.asarray(kept).shape[-1]
        symbols = _symbols(X, n_features, where)
        return symbols, int(symbols.max()) + 1 if n_features is None else int(n_features)

    def fit(self, X: ArrayLike, lengths: ArrayLike | None = None) -> CategoricalHMM:
        """Baum–Welch (EM) from a random start, or from the parameters ``init_params`` leaves.

        Each iteration runs forward–backward on every sequence (E-step: expected start,
        transition and emission counts) and re-estimates the probabilities from those counts
        (M-step). Stops after ``n_iter`` iterations or when one raises the objective (the
        log-likelihood, plus the log prior when a prior is not 1.0) by less than ``tol``.

        Parameters
        ----------
        X : array_like of int, shape (n_samples, 1)
            Symbol indices 0..n_features - 1.
        lengths : array_like of int, optional
            Lengths of the sequences in X (None: one sequence); positive, summing to n_samples.

        Returns
        -------
        self : CategoricalHMM

        Raises
        ------
        ValueError
            For symbols that are not integers in 0..n_features - 1, bad lengths, parameters set
            by hand that are not distributions of the right shape, or a sequence of probability
            0 under the starting parameters.
        """
        k, n_iter, tol = self._check_hyperparameters()
        symbols, n_features = self._fit_features(X, "fit")
        layouts = rec.layouts(_lengths(lengths, symbols.size))
        self.n_features = n_features
        self._initialize(k, n_features)
        parameters = self._parameters("fit")
        log_prob, _, counts = self._forward_backward(parameters, symbols, layouts, posteriors=False, stats=True)
        objective = log_prob + self._log_prior()
        self.history_, self.objective_history_, self.n_iter_, self.converged_ = [], [], 0, False
        for iteration in range(n_iter):
            self._m_step(counts)
            last = iteration == n_iter - 1
            new, _, counts = self._forward_backward(
                self._parameters("fit"), symbols, layouts, posteriors=False, stats=not last
            )
            self.history_.append(new)
            self.objective_history_.append(new + self._log_prior())
            self.n_iter_ = iteration + 1
            change, objective = self.objective_history_[-1] - objective, self.objective_history_[-1]
            if self.verbose:
                print(f"{iteration + 1:>10d} {objective:>16.8f} {change:>+16.8f}", file=sys.stderr)
            if change < tol:  # a fall too: with priors >= 1 only rounding can lower the objective
                self.converged_ = True
                break
        return self

    def fit_supervised(
        self, X: ArrayLike, states: ArrayLike, lengths: ArrayLike | None = None, *, k: float = 1.0
    ) -> CategoricalHMM:
        """Fit from sequences whose states are seen: counts with add-k smoothing.

        .. math::

            \\pi_j = \\frac{N(z_1 = j) + k}{S + kK}, \\quad
            A_{ij} = \\frac{N(i \\to j) + k}{N(i \\to \\cdot) + kK}, \\quad
            B_{jv} = \\frac{N(j, v) + k}{N(j) + k\\,V},

        with S sequences, K = n_components states and V = n_features symbols. ``k = 0`` gives
        the maximum-likelihood counts; an unseen symbol then has probability 0 in every state.

        Parameters
        ----------
        X : array_like of int, shape (n_samples, 1)
            Symbol indices.
        states : array_like of int, shape (n_samples,)
            The state of every symbol, 0..n_components - 1.
        lengths : array_like of int, optional
            Lengths of the sequences.
        k : float, default 1.0
            Pseudo-count added to every start, transition and emission count (>= 0).

        Returns
        -------
        self : CategoricalHMM

        Examples
        --------
        >>> X = np.array([[0], [1], [1], [2]])
        >>> model = CategoricalHMM(2, n_features=3).fit_supervised(X, [0, 1, 1, 0], [3, 1], k=0)
        >>> model.startprob_, model.transmat_[0]
        (array([1., 0.]), array([0., 1.]))
        """
        n_states = self._n_components()
        symbols, n_features = self._fit_features(X, "fit_supervised")
        lengths = _lengths(lengths, symbols.size)
        labels = np.asarray(states)
        if labels.ndim == 2 and labels.shape[1] == 1:
            labels = labels[:, 0]
        if labels.shape != symbols.shape or labels.dtype.kind not in "iu":
            raise ValueError(
                f"states must hold one integer state per row of X ({symbols.size}); got "
                f"{labels.dtype} of shape {labels.shape}."
            )
        if labels.min() < 0 or labels.max() >= n_states:
            raise ValueError(
                f"states holds {int(labels.min() if labels.min() < 0 else labels.max())}, "
                f"outside 0..{n_states - 1}; set n_components to the number of states (tags)."
            )
        if not np.isfinite(k) or k < 0:
            raise ValueError(f"k must be a finite number >= 0 (0: maximum likelihood); got {k!r}.")
        labels = labels.astype(np.intp)
        firsts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        inside = np.ones(symbols.size, dtype=bool)
        inside[np.cumsum(lengths) - 1] = False  # the last symbol of a sequence has no successor
        following = labels[1:][inside[:-1]]
        counts = {
            "startprob_": np.bincount(labels[firsts], minlength=n_states),
            "transmat_": np.bincount(
                labels[:-1][inside[:-1]] * n_states + following, minlength=n_states * n_states
            ).reshape(n_states, n_states),
            "emissionprob_": np.bincount(labels * n_features + symbols, minlength=n_states * n_features).reshape(
                n_states, n_features
            ),
        }
        for name, count in counts.items():
            empty = np.flatnonzero(count.sum(axis=-1, keepdims=True).ravel() == 0)
            if k == 0 and empty.size:
                raise ValueError(
                    f"With k = 0, state {int(empty[0])} has no counts for {name} (it never occurs, "
                    f"or never before another state), so its row would be 0/0; use k > 0."
                )
            setattr(self, name, add_k(count, float(k)))  # chapter 1's estimate, row by row
        self.n_features = n_features
        return self

    # ------------------------------------------------------------------ sampling

    def sample(self, n_samples: int = 1, random_state: Any = None) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        """Draw one sequence of ``n_samples`` symbols from the model.

        Draws the same numbers as hmmlearn's ``sample`` (one uniform for the first state, then
        one per emission and one per transition, in that order), so the same seed gives the same
        sequence.

        Parameters
        ----------
        n_samples : int, default 1
            Length of the sequence.
        random_state : int, RandomState, Generator or None
            Source of the uniform draws; None uses the model's ``random_state``.

        Returns
        -------
        X : ndarray of int, shape (n_samples, 1)
            The symbols, as a column.
        states : ndarray of int, shape (n_samples,)
            The hidden states that emitted them.

        Examples
        --------
        >>> model = CategoricalHMM(2, n_features=2)
        >>> model.startprob_, model.transmat_ = [1.0, 0.0], [[0.0, 1.0], [1.0, 0.0]]
        >>> model.emissionprob_ = [[1.0, 0.0], [0.0, 1.0]]
        >>> X, states = model.sample(4, random_state=0)
        >>> X.ravel(), states
        (array([0, 1, 0, 1]), array([0, 1, 0, 1]))
        """
        startprob, transmat, emissionprob = self._parameters("sample")
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}.")
        seed = self.random_state if random_state is None else random_state
        generator = seed if isinstance(seed, np.random.Generator) else check_random_state(seed)
        uniform = generator.random(2 * int(n_samples))
        k, n_features = emissionprob.shape
        cdf = np.cumsum(transmat, axis=1).tolist()
        state = min(bisect.bisect_right(np.cumsum(startprob).tolist(), uniform[0]), k - 1)
        states = [state]
        for u in uniform[2::2].tolist():
            state = min(bisect.bisect_right(cdf[state], u), k - 1)
            states.append(state)
        states = np.array(states, dtype=np.intp)
        # Every state's emission CDF shifted by its index: one sorted array for all draws.
        shifted = (np.cumsum(emissionprob, axis=1) + np.arange(k)[:, None]).ravel()
        symbols = np.searchsorted(shifted, uniform[1::2] + states, side="right") - states * n_features
        return np.minimum(symbols, n_features - 1)[:, None], states
