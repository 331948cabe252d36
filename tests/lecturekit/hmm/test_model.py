"""Tests of lecturekit.hmm: CategoricalHMM against hmmlearn 0.3.3 and brute force (chapter 6).

hmmlearn's ``CategoricalHMM`` is the reference, with the same parameters set in both models:
log-likelihood, posteriors, Viterbi paths and their log-probability, one Baum–Welch iteration
and the random start all agree to 1e-8. Short sequences are checked against brute force over all
K^J state paths. RuntimeWarnings from lecturekit are errors (pyproject.toml).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hmmlearn.hmm import CategoricalHMM as ReferenceHMM
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from lecturekit.hmm import CategoricalHMM, recursions, sequences_to_column

TOL = {"rtol": 1e-8, "atol": 1e-8}
PARAMETERS = ("startprob_", "transmat_", "emissionprob_")


def random_model(seed: int, k: int, n_features: int, concentration: float = 1.0):
    """Random start, transition and emission probabilities (Dirichlet rows)."""
    rng = np.random.default_rng(seed)
    return (
        rng.dirichlet(np.full(k, concentration)),
        rng.dirichlet(np.full(k, concentration), size=k),
        rng.dirichlet(np.full(n_features, concentration), size=k),
    )


def random_data(seed: int, n_features: int, n_sequences: int, max_length: int):
    """Random symbols in sequences of 1..max_length symbols: (X, lengths)."""
    rng = np.random.default_rng(seed + 1000)
    lengths = rng.integers(1, max_length + 1, size=n_sequences)
    return rng.integers(0, n_features, size=(int(lengths.sum()), 1)), lengths


def with_parameters(model, parameters):
    for name, value in zip(PARAMETERS, parameters, strict=True):
        setattr(model, name, value.copy())
    return model


def pair(parameters, **options):
    """Our model and hmmlearn's with the same parameters and options."""
    k, n_features = parameters[2].shape
    return (
        with_parameters(CategoricalHMM(k, n_features=n_features, **options), parameters),
        with_parameters(ReferenceHMM(k, n_features=n_features, **options), parameters),
    )


CASES = [  # (seed, K, n_features, n_sequences, max_length)
    (0, 1, 3, 5, 8),
    (1, 2, 4, 30, 12),
    (2, 3, 10, 50, 25),
    (3, 5, 6, 8, 60),
    (4, 4, 50, 200, 20),
    (5, 12, 300, 100, 40),
]


# --------------------------------------------------------------------------- against hmmlearn


@pytest.mark.parametrize("seed, k, n_features, n_sequences, max_length", CASES)
def test_inference_equals_hmmlearn(seed, k, n_features, n_sequences, max_length):
    parameters = random_model(seed, k, n_features)
    X, lengths = random_data(seed, n_features, n_sequences, max_length)
    ours, reference = pair(parameters)
    np.testing.assert_allclose(ours.score(X, lengths), reference.score(X, lengths), **TOL)
    log_prob, posteriors = ours.score_samples(X, lengths)
    expected_log_prob, expected_posteriors = reference.score_samples(X, lengths)
    np.testing.assert_allclose(log_prob, expected_log_prob, **TOL)
    np.testing.assert_allclose(posteriors, expected_posteriors, **TOL)
    np.testing.assert_allclose(ours.predict_proba(X, lengths), expected_posteriors, **TOL)
    best, states = ours.decode(X, lengths)
    expected_best, expected_states = reference.decode(X, lengths)
    np.testing.assert_allclose(best, expected_best, **TOL)
    np.testing.assert_array_equal(states, expected_states)
    np.testing.assert_array_equal(ours.predict(X, lengths), expected_states)


def path_log_prob(parameters, symbols, path):
    """log p(x, z) of one sequence and one state path."""
    startprob, transmat, emissionprob = (np.log(p) for p in parameters)
    return startprob[path[0]] + transmat[path[:-1], path[1:]].sum() + emissionprob[path, symbols].sum()


def test_one_long_sequence_equals_hmmlearn():
    # lengths=None: one sequence of 3,000 symbols; the scaled recursion does not underflow.
    parameters = random_model(7, 3, 5)
    X = np.random.default_rng(7).integers(0, 5, size=(3000, 1))
    ours, reference = pair(parameters)
    assert ours.score(X) < -3000
    np.testing.assert_allclose(ours.score(X), reference.score(X), **TOL)
    np.testing.assert_allclose(ours.predict_proba(X), reference.predict_proba(X), **TOL)
    # This sequence has exactly tied best paths (a segment 0 -> 2 -> 0 -> 0 scores as
    # 0 -> 0 -> 2 -> 0 on repeated symbols), which hmmlearn's C++ log and NumPy's may break
    # differently: both paths must score the maximum.
    best, states = ours.decode(X)
    expected_best, expected_states = reference.decode(X)
    np.testing.assert_allclose(best, expected_best, **TOL)
    np.testing.assert_allclose(path_log_prob(parameters, X[:, 0], states), expected_best, **TOL)
    np.testing.assert_allclose(path_log_prob(parameters, X[:, 0], expected_states), expected_best, **TOL)
    assert (states == expected_states).mean() > 0.99


@pytest.mark.parametrize("seed, k, n_features, n_sequences, max_length", CASES)
@pytest.mark.parametrize("params", ["ste", "st", "e"])
def test_one_baum_welch_iteration_equals_hmmlearn(seed, k, n_features, n_sequences, max_length, params):
    parameters = random_model(seed, k, n_features)
    X, lengths = random_data(seed, n_features, n_sequences, max_length)
    ours, reference = pair(parameters, n_iter=1, init_params="", params=params)
    ours.fit(X, lengths)
    reference.fit(X, lengths)
    for name in PARAMETERS:
        np.testing.assert_allclose(getattr(ours, name), getattr(reference, name), **TOL)
    assert ours.n_iter_ == 1 and len(ours.history_) == 1


@pytest.mark.parametrize("prior", [0.5, 1.5, 3.0])
def test_baum_welch_with_dirichlet_priors_equals_hmmlearn(prior):
    parameters = random_model(11, 3, 8)
    X, lengths = random_data(11, 8, 40, 15)
    priors = {"startprob_prior": prior, "transmat_prior": prior + 0.25, "emissionprob_prior": prior + 0.5}
    ours, reference = pair(parameters, n_iter=1, init_params="", **priors)
    ours.fit(X, lengths)
    reference.fit(X, lengths)
    for name in PARAMETERS:
        np.testing.assert_allclose(getattr(ours, name), getattr(reference, name), **TOL)


def test_random_start_and_several_iterations_equal_hmmlearn():
    # The same seed draws the same start; with tol=0 both run all iterations. hmmlearn records
    # the log-likelihood before each M-step, ours after: one iteration apart.
    X, lengths = random_data(3, 6, 60, 20)
    ours = CategoricalHMM(3, n_iter=6, tol=0, random_state=42).fit(X, lengths)
    reference = ReferenceHMM(3, n_iter=6, tol=0, random_state=42).fit(X, lengths)
    assert ours.n_features == reference.n_features == 6
    for name in PARAMETERS:
        np.testing.assert_allclose(getattr(ours, name), getattr(reference, name), **TOL)
    np.testing.assert_allclose(ours.history_[:-1], list(reference.monitor_.history)[1:], **TOL)
    np.testing.assert_allclose(ours.history_[-1], ours.score(X, lengths), **TOL)
    assert ours.n_iter_ == 6 and not ours.converged_


def test_sample_equals_hmmlearn_with_the_same_seed():
    parameters = random_model(5, 4, 9)
    ours, reference = pair(parameters)
    X, states = ours.sample(500, random_state=3)
    expected_X, expected_states = reference.sample(500, random_state=3)
    np.testing.assert_array_equal(X, expected_X)
    np.testing.assert_array_equal(states, expected_states)


# --------------------------------------------------------------------------- brute force


def brute_force(parameters, sequence):
    """log p(x, z) for every path z of the sequence, as {path: log-probability}."""
    startprob, transmat, emissionprob = (np.log(p) for p in parameters)
    k = startprob.size
    joint = {}
    for path in itertools.product(range(k), repeat=len(sequence)):
        value = startprob[path[0]] + emissionprob[path[0], sequence[0]]
        for before, after, symbol in zip(path, path[1:], sequence[1:], strict=False):
            value += transmat[before, after] + emissionprob[after, symbol]
        joint[path] = value
    return joint


@pytest.mark.parametrize("seed", range(6))
def test_viterbi_and_likelihood_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    k, n_features = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    parameters = random_model(seed, k, n_features, concentration=0.7)
    model = with_parameters(CategoricalHMM(k, n_features=n_features), parameters)
    sequences = [rng.integers(0, n_features, size=int(rng.integers(1, 7))) for _ in range(4)]
    X = np.concatenate(sequences)[:, None]
    lengths = [len(s) for s in sequences]
    best_total, states = model.decode(X, lengths)
    _, posteriors = model.score_samples(X, lengths)
    expected_total, expected_score, start = 0.0, 0.0, 0
    for sequence in sequences:
        joint = brute_force(parameters, sequence)
        path = max(joint, key=joint.get)
        np.testing.assert_array_equal(states[start : start + len(sequence)], path)
        expected_total += joint[path]
        log_z = logsumexp(list(joint.values()))
        expected_score += log_z
        marginals = np.zeros((len(sequence), k))
        for z, value in joint.items():
            marginals[np.arange(len(sequence)), z] += np.exp(value - log_z)
        np.testing.assert_allclose(posteriors[start : start + len(sequence)], marginals, **TOL)
        start += len(sequence)
    np.testing.assert_allclose(best_total, expected_total, **TOL)
    np.testing.assert_allclose(model.score(X, lengths), expected_score, **TOL)


# --------------------------------------------------------------------------- properties


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(1, 5),
    n_features=st.integers(1, 8),
    n_sequences=st.integers(1, 12),
    max_length=st.integers(1, 15),
)
def test_posteriors_are_distributions(seed, k, n_features, n_sequences, max_length):
    parameters = random_model(seed, k, n_features, concentration=0.5)
    X, lengths = random_data(seed, n_features, n_sequences, max_length)
    model = with_parameters(CategoricalHMM(k, n_features=n_features), parameters)
    posteriors = model.predict_proba(X, lengths)
    assert posteriors.shape == (X.shape[0], k)
    assert (posteriors >= 0).all() and (posteriors <= 1 + 1e-12).all()
    np.testing.assert_allclose(posteriors.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # The Viterbi path's joint probability never exceeds the likelihood.
    assert model.decode(X, lengths)[0] <= model.score(X, lengths) + 1e-9


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(1, 4),
    n_features=st.integers(2, 8),
    n_sequences=st.integers(1, 10),
    max_length=st.integers(1, 20),
)
def test_baum_welch_never_decreases_the_likelihood(seed, k, n_features, n_sequences, max_length):
    X, lengths = random_data(seed, n_features, n_sequences, max_length)
    model = CategoricalHMM(k, n_features=n_features, n_iter=8, tol=0, random_state=seed % 1000)
    start = with_parameters(clone(model), random_start(model, X))
    model.fit(X, lengths)
    history = [start.score(X, lengths)] + model.history_
    assert np.all(np.diff(history) >= -1e-8 * np.abs(history[:-1]).max())
    np.testing.assert_allclose(model.history_[-1], model.score(X, lengths), **TOL)


def random_start(model, X):
    """The parameters fit starts from with this random_state (fit with no iteration)."""
    return tuple(getattr(clone(model).set_params(n_iter=0).fit(X), name) for name in PARAMETERS)


def test_history_and_convergence():
    X, lengths = random_data(1, 5, 80, 20)
    model = CategoricalHMM(3, n_iter=500, tol=1e-3, random_state=0).fit(X, lengths)
    assert model.converged_ and model.n_iter_ == len(model.history_) < 500
    assert model.objective_history_ == model.history_  # priors of 1.0: objective = likelihood
    assert model.history_[-1] - model.history_[-2] < 1e-3
    assert np.all(np.diff(model.history_) >= 0)
    capped = CategoricalHMM(3, n_iter=2, tol=1e-3, random_state=0).fit(X, lengths)
    assert capped.n_iter_ == 2 and not capped.converged_
    np.testing.assert_allclose(capped.history_, model.history_[:2], **TOL)


def log_prior(model):
    """sum (prior - 1) log theta over the positive entries of the tables in params, one by one."""
    total = 0.0
    for code, name in zip("ste", PARAMETERS, strict=True):
        if code not in model.params:  # a table fit does not update: a constant, left out
            continue
        theta = getattr(model, name)
        prior = np.broadcast_to(getattr(model, name + "prior"), theta.shape)
        total += sum((a - 1) * np.log(t) for a, t in zip(prior.ravel(), theta.ravel(), strict=True) if t > 0)
    return total


def test_with_priors_fit_monitors_the_log_posterior_not_the_log_likelihood():
    # Started near the maximum-likelihood fit, Baum-Welch with priors above 1 pulls the parameters
    # towards the prior's mode: the log-likelihood falls while the objective it maximises rises.
    # Watching the log-likelihood would stop at the first iteration and call that convergence.
    X, lengths = random_data(4, 5, 60, 20)
    mle = CategoricalHMM(3, n_iter=100, tol=1e-6, random_state=0).fit(X, lengths)
    priors = {"startprob_prior": 2.0, "transmat_prior": 3.0, "emissionprob_prior": 4.0}
    model = CategoricalHMM(3, n_features=5, n_iter=1000, tol=1e-2, init_params="", **priors)
    model = with_parameters(model, tuple(getattr(mle, name) for name in PARAMETERS))
    objective = [mle.score(X, lengths) + log_prior(model)]
    model.fit(X, lengths)
    assert model.history_[0] < mle.score(X, lengths) - 0.1  # the log-likelihood falls ...
    assert model.n_iter_ > 10 and model.converged_  # ... which is no convergence
    objective += model.objective_history_
    assert objective[1] > objective[0] + 10  # the objective rises
    assert 0 <= objective[-1] - objective[-2] < 1e-2 <= objective[-2] - objective[-3]
    assert np.all(np.diff(objective) >= -1e-12 * np.abs(objective).max())
    assert len(model.history_) == len(model.objective_history_) == model.n_iter_
    np.testing.assert_allclose(model.objective_history_[-1], model.score(X, lengths) + log_prior(model), **TOL)


def test_a_zero_emission_under_a_prior_above_1_is_an_infinite_rise():
    # The prior density is 0 at the start, so the first iteration's rise is infinite: even a huge
    # tol does not stop it; the second iteration's finite rise does.
    X, lengths = random_data(6, 4, 20, 10)
    parameters = random_model(6, 2, 4)
    parameters[2][0] = [0.0, 0.5, 0.25, 0.25]
    model = with_parameters(
        CategoricalHMM(2, n_features=4, n_iter=5, tol=1e9, init_params="", emissionprob_prior=2.0), parameters
    )
    model.fit(X, lengths)
    assert model.n_iter_ == 2 and model.converged_ and (model.emissionprob_ > 0).all()
    assert np.isfinite(model.objective_history_).all()


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    k=st.integers(1, 4),
    n_features=st.integers(2, 8),
    n_sequences=st.integers(1, 10),
    max_length=st.integers(1, 20),
    priors=st.tuples(*[st.floats(1.0, 4.0)] * 3),
    params=st.sampled_from(["ste", "st", "e"]),
)
def test_baum_welch_with_priors_never_decreases_the_objective(
    seed, k, n_features, n_sequences, max_length, priors, params
):
    X, lengths = random_data(seed, n_features, n_sequences, max_length)
    names = ("startprob_prior", "transmat_prior", "emissionprob_prior")
    model = CategoricalHMM(
        k,
        n_features=n_features,
        n_iter=8,
        tol=0,
        random_state=seed % 1000,
        params=params,
        **dict(zip(names, priors, strict=True)),
    )
    start = with_parameters(clone(model), random_start(model, X))
    model.fit(X, lengths)
    objective = [start.score(X, lengths) + log_prior(start)] + model.objective_history_
    assert np.all(np.diff(objective) >= -1e-8 * np.abs(objective).max())
    np.testing.assert_allclose(model.objective_history_[-1], model.score(X, lengths) + log_prior(model), **TOL)


def test_verbose_prints_each_iteration(capsys):
    X, lengths = random_data(2, 4, 10, 10)
    CategoricalHMM(2, n_iter=3, tol=0, random_state=0, verbose=True).fit(X, lengths)
    assert len(capsys.readouterr().err.strip().splitlines()) == 3


def test_batches_do_not_change_the_results(monkeypatch):
    parameters = random_model(9, 3, 7)
    X, lengths = random_data(9, 7, 120, 30)
    model = with_parameters(CategoricalHMM(3, n_features=7), parameters)
    whole = model.score_samples(X, lengths), model.decode(X, lengths)
    monkeypatch.setattr(recursions, "BATCH_SIZE", 50)
    monkeypatch.setattr(recursions.layouts, "__defaults__", (50,))
    assert len(recursions.layouts(lengths)) > 10
    batched = model.score_samples(X, lengths), model.decode(X, lengths)
    np.testing.assert_allclose(batched[0][0], whole[0][0], **TOL)
    np.testing.assert_allclose(batched[0][1], whole[0][1], **TOL)
    np.testing.assert_array_equal(batched[1][1], whole[1][1])


def test_impossible_sequence_scores_minus_infinity_quietly():
    model = CategoricalHMM(2, n_features=3)
    model.startprob_ = np.array([1.0, 0.0])
    model.transmat_ = np.array([[0.5, 0.5], [0.0, 1.0]])
    model.emissionprob_ = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    X = np.array([[2], [0], [1], [1]])
    assert model.score(X, [1, 3]) == -np.inf
    log_prob, states = model.decode(X, [1, 3])
    assert log_prob == -np.inf and states.shape == (4,)
    with pytest.raises(ValueError, match="probability 0 under the model"):
        model.predict_proba(X, [1, 3])
    assert np.isfinite(model.score(X[1:], [3]))


# --------------------------------------------------------------------------- supervised fitting


def hand_counts(sequences, tag_sequences, k_states, n_features, k):
    """Add-k estimates counted with plain loops over the tagged sequences."""
    start = np.full(k_states, float(k))
    trans = np.full((k_states, k_states), float(k))
    emit = np.full((k_states, n_features), float(k))
    for symbols, tags in zip(sequences, tag_sequences, strict=True):
        start[tags[0]] += 1
        for a, b in itertools.pairwise(tags):
            trans[a, b] += 1
        for tag, symbol in zip(tags, symbols, strict=True):
            emit[tag, symbol] += 1
    return (start / start.sum(), trans / trans.sum(axis=1, keepdims=True), emit / emit.sum(axis=1, keepdims=True))


@pytest.mark.parametrize("k", [0.0, 0.1, 1.0, 2.5])
def test_fit_supervised_equals_hand_counts(k):
    rng = np.random.default_rng(int(k * 10))
    sampler = with_parameters(CategoricalHMM(3, n_features=6), random_model(2, 3, 6))
    pieces = [sampler.sample(int(n), random_state=rng) for n in rng.integers(1, 25, size=60)]
    X = np.concatenate([piece[0] for piece in pieces])
    states = np.concatenate([piece[1] for piece in pieces])
    lengths = [len(piece[1]) for piece in pieces]
    model = CategoricalHMM(3, n_features=6).fit_supervised(X, states, lengths, k=k)
    expected = hand_counts([p[0].ravel() for p in pieces], [p[1] for p in pieces], 3, 6, k)
    for name, value in zip(PARAMETERS, expected, strict=True):
        np.testing.assert_allclose(getattr(model, name), value, rtol=1e-12, atol=1e-15)
    assert model.n_features == 6


def test_fit_supervised_then_baum_welch_starts_from_the_counts():
    X, lengths = random_data(4, 5, 30, 12)
    states = np.random.default_rng(4).integers(0, 2, size=X.shape[0])
    supervised = CategoricalHMM(2, n_features=5).fit_supervised(X, states, lengths)
    refined = clone(supervised).fit_supervised(X, states, lengths)
    refined.set_params(init_params="", n_iter=1).fit(X, lengths)
    _, reference = pair(tuple(getattr(supervised, n) for n in PARAMETERS), n_iter=1, init_params="")
    reference.fit(X, lengths)
    for name in PARAMETERS:
        np.testing.assert_allclose(getattr(refined, name), getattr(reference, name), **TOL)


def test_fit_supervised_with_k_zero_and_an_unused_state():
    X, states = [[0], [1], [0], [1]], [0, 1, 0, 1]
    with pytest.raises(ValueError, match="state 2 has no counts for transmat_"):
        CategoricalHMM(3, n_features=2).fit_supervised(X, states, k=0)
    model = CategoricalHMM(3, n_features=2).fit_supervised(X, states, k=1)
    np.testing.assert_allclose(model.emissionprob_[2], [0.5, 0.5])
    np.testing.assert_allclose(model.transmat_[2], [1 / 3, 1 / 3, 1 / 3])


def test_state_without_transitions_keeps_its_row_in_baum_welch():
    # One sequence of one symbol: no transition to count, so the row stays as it was (hmmlearn
    # would leave it at zero).
    model = with_parameters(CategoricalHMM(2, n_features=2, n_iter=1, init_params=""), random_model(0, 2, 2))
    before = model.transmat_.copy()
    model.fit([[1]])
    np.testing.assert_array_equal(model.transmat_, before)
    np.testing.assert_allclose(model.startprob_.sum(), 1.0)


# --------------------------------------------------------------------------- sampling


def test_sample_shape_and_range():
    model = with_parameters(CategoricalHMM(4, n_features=7), random_model(1, 4, 7))
    X, states = model.sample(300, random_state=0)
    assert X.shape == (300, 1) and states.shape == (300,)
    assert X.dtype.kind == "i" and states.dtype.kind == "i"
    assert X.min() >= 0 and X.max() < 7 and states.min() >= 0 and states.max() < 4
    again = model.sample(300, random_state=0)
    np.testing.assert_array_equal(again[0], X)
    assert model.sample()[0].shape == (1, 1)


def test_long_sample_transition_and_emission_frequencies_approach_the_model():
    n = 200_000
    parameters = random_model(3, 3, 4, concentration=2.0)
    model = with_parameters(CategoricalHMM(3, n_features=4), parameters)
    X, states = model.sample(n, random_state=1)
    counts = np.zeros((3, 3))
    np.add.at(counts, (states[:-1], states[1:]), 1)
    rows = counts.sum(axis=1, keepdims=True)
    frequencies = counts / rows
    # Five standard errors of a proportion with this many transitions out of each state.
    bound = 5 * np.sqrt(parameters[1] * (1 - parameters[1]) / rows)
    assert (np.abs(frequencies - parameters[1]) < bound).all()
    emissions = np.zeros((3, 4))
    np.add.at(emissions, (states, X[:, 0]), 1)
    visits = emissions.sum(axis=1, keepdims=True)
    bound = 5 * np.sqrt(parameters[2] * (1 - parameters[2]) / visits)
    assert (np.abs(emissions / visits - parameters[2]) < bound).all()


# ------------------------------------------------------------- sequences_to_column (lecturekit.hmm.encoding)


def test_sequences_to_column():
    vocabulary = {"the": 0, "dog": 1, "barks": 2}
    X, lengths = sequences_to_column([("the", "dog"), ("dog", "barks", "the")], vocabulary)
    np.testing.assert_array_equal(X, [[0], [1], [1], [2], [0]])
    np.testing.assert_array_equal(lengths, [2, 3])
    with pytest.raises(ValueError, match="'cat'.*not in the vocabulary"):
        sequences_to_column([("the", "cat")], vocabulary)
    X, _ = sequences_to_column([("the", "cat")], {**vocabulary, "<unk>": 3})
    np.testing.assert_array_equal(X.ravel(), [0, 3])
    with pytest.raises(ValueError, match="sequence 1 is empty"):
        sequences_to_column([("the",), ()], vocabulary)
    with pytest.raises(ValueError, match="there are none"):
        sequences_to_column([], vocabulary)


def test_supervised_tagger_on_the_brown_corpus():
    # End to end: the first 3,000 Brown sentences train a tagger, the next 500 test it; an HMM
    # with add-one smoothing tags most words right, far above tagging everything NOUN.
    from lecturekit.datasets import UNIVERSAL_TAGS, load_brown

    words, tags = load_brown()
    train_words, train_tags = words[:3000], tags[:3000]
    vocabulary = {w: i for i, w in enumerate(sorted({w for s in train_words for w in s}))}
    vocabulary["<unk>"] = len(vocabulary)
    tag_index = {t: i for i, t in enumerate(UNIVERSAL_TAGS)}
    X, lengths = sequences_to_column(train_words, vocabulary)
    states = np.array([tag_index[t] for s in train_tags for t in s])
    model = CategoricalHMM(12, n_features=len(vocabulary)).fit_supervised(X, states, lengths, k=0.1)
    X_test, lengths_test = sequences_to_column(words[3000:3500], vocabulary)
    truth = np.array([tag_index[t] for s in tags[3000:3500] for t in s])
    accuracy = float((model.predict(X_test, lengths_test) == truth).mean())
    baseline = float((truth == tag_index["NOUN"]).mean())
    assert accuracy > 0.85 and baseline < 0.4


# --------------------------------------------------------------------------- errors


def fitted():
    return with_parameters(CategoricalHMM(2, n_features=3), random_model(0, 2, 3))


@pytest.mark.parametrize(
    "X, lengths, message",
    [
        ([[0], [3]], None, r"symbol 3 .*outside 0\.\.2"),
        ([[0], [-1]], None, r"symbol -1 .*outside 0\.\.2"),
        ([[0.0], [1.5]], None, "integer symbol indices"),
        ([[0.0], [np.nan]], None, "NaN"),
        ([["a"], ["b"]], None, "integer symbol indices"),
        ([0, 1, 2], None, r"shape \(n_samples, 1\)"),
        (np.zeros((3, 2), dtype=int), None, r"shape \(n_samples, 1\)"),
        (np.zeros((0, 1), dtype=int), None, "non-empty column"),
        ([[0], [1], [2]], [1, 1], "sum to 2 but X has 3 rows"),
        ([[0], [1], [2]], [3, 0], "empty sequence"),
        ([[0], [1], [2]], [4, -1], r"lengths\[1\] = -1"),
        ([[0], [1], [2]], [1.5, 1.5], "integers"),
        ([[0], [1], [2]], [[1, 2]], "1-D"),
    ],
)
@pytest.mark.parametrize("method", ["score", "score_samples", "decode", "predict", "predict_proba", "fit"])
def test_bad_input_raises(X, lengths, message, method):
    with pytest.raises(ValueError, match=message):
        getattr(fitted().set_params(init_params=""), method)(X, lengths)


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("startprob_", [0.5, 0.6], "must sum to 1"),
        ("startprob_", [1.2, -0.2], "negative entry"),
        ("startprob_", [np.nan, 1.0], "NaN"),
        ("startprob_", [1.0], r"shape \(1,\), but this model needs \(2,\)"),
        ("transmat_", [[0.5, 0.5], [0.5, 0.4]], "must sum to 1"),
        ("transmat_", [[1.0, 0.0]], r"needs \(2, 2\)"),
        ("emissionprob_", [[0.2, 0.8, 0.0], [0.3, 0.3, 0.3]], "must sum to 1"),
        ("emissionprob_", [[0.5, 0.5], [0.5, 0.5]], r"needs \(2, 3\)"),
    ],
)
@pytest.mark.parametrize("method", ["score", "decode", "predict_proba", "sample"])
def test_bad_probabilities_set_by_hand_raise(name, value, message, method):
    model = fitted()
    setattr(model, name, np.array(value))
    arguments = () if method == "sample" else ([[0], [1]],)
    with pytest.raises(ValueError, match=message):
        getattr(model, method)(*arguments)


@pytest.mark.parametrize("method", ["score", "score_samples", "decode", "predict", "predict_proba", "sample"])
def test_predicting_before_fit_raises(method):
    arguments = () if method == "sample" else ([[0], [1]],)
    with pytest.raises(NotFittedError, match="call fit or fit_supervised before") as info:
        getattr(CategoricalHMM(2), method)(*arguments)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "states, message",
    [
        ([0, 1], "one integer state per row of X"),
        ([0, 1, 2], r"states holds 2, outside 0\.\.1"),
        ([0, -1, 1], r"states holds -1"),
        ([0.0, 1.0, 1.0], "one integer state per row"),
    ],
)
def test_fit_supervised_bad_states_raise(states, message):
    with pytest.raises(ValueError, match=message):
        CategoricalHMM(2, n_features=3).fit_supervised([[0], [1], [2]], states)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"n_components": 0}, "n_components"),
        ({"n_iter": -1}, "n_iter"),
        ({"tol": np.nan}, "tol"),
        ({"params": "stx"}, "params"),
        ({"init_params": 3}, "init_params"),
        ({"transmat_prior": 0.0}, "transmat_prior"),
        ({"emissionprob_prior": np.nan}, "emissionprob_prior"),
    ],
)
def test_bad_hyperparameters_raise(options, message):
    with pytest.raises(ValueError, match=message):
        CategoricalHMM(**{"n_components": 2, **options}).fit([[0], [1], [1]])


@pytest.mark.parametrize("k", [-1.0, np.nan])
def test_fit_supervised_bad_k_raises(k):
    with pytest.raises(ValueError, match="k must be"):
        CategoricalHMM(2).fit_supervised([[0], [1]], [0, 1], k=k)


def test_bad_sample_size_raises():
    for n in (0, -3, 2.5):
        with pytest.raises(ValueError, match="n_samples must be a positive integer"):
            fitted().sample(n)


def test_estimator_parameters_round_trip():
    model = CategoricalHMM(3, n_features=4, n_iter=5, tol=0.5, random_state=1)
    assert clone(model).get_params() == model.get_params()
    assert model.get_params()["n_components"] == 3
