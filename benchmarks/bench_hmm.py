"""Chapter 6: the hidden Markov model, ``lecturekit.hmm.CategoricalHMM`` against hmmlearn's.

scikit-learn has no HMM; the reference is hmmlearn 0.3.3's ``CategoricalHMM`` (compiled C++
recursions, called once per sequence). Both models get the same parameters: a tagger fitted by
``fit_supervised`` (add-0.1 counts) on 2,000 sentences of the Brown corpus, 12 universal tags and
a vocabulary of the 4,999 most frequent words plus ``<unk>`` (5,000 symbols), about 20 words per
sentence on average. On those sentences, timed:

* Viterbi (``decode``), the tagger's prediction;
* ``score``, the forward recursion alone, and ``score_samples``, forward-backward posteriors;
* one Baum–Welch iteration (``fit`` with ``n_iter=1``, ``init_params=""``) from the same start.
  Ours also runs one more forward pass to record the log-likelihood after the iteration
  (``history_``); hmmlearn's does not.

tests/lecturekit/hmm/test_model.py checks that the two agree to 1e-8 on all of these.
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np
from hmmlearn.hmm import CategoricalHMM as ReferenceHMM

from lecturekit.datasets import UNIVERSAL_TAGS, load_brown
from lecturekit.hmm import CategoricalHMM, sequences_to_column
from timing import report

PARAMETERS = ("startprob_", "transmat_", "emissionprob_")


def main(quick: bool = False) -> None:
    # hmmlearn logs a warning about "degenerate solutions" (more parameters than symbols).
    logging.getLogger("hmmlearn").setLevel(logging.ERROR)
    n_sentences, n_words = (200, 500) if quick else (2_000, 5_000)
    words, tags = load_brown()
    words, tags = words[:n_sentences], tags[:n_sentences]
    frequent = [w for w, _ in Counter(w for s in words for w in s).most_common(n_words - 1)]
    vocabulary = {w: i for i, w in enumerate(frequent)}
    vocabulary["<unk>"] = len(vocabulary)
    X, lengths = sequences_to_column(words, vocabulary)
    tag_index = {t: i for i, t in enumerate(UNIVERSAL_TAGS)}
    states = np.array([tag_index[t] for s in tags for t in s])
    k, n_features = len(UNIVERSAL_TAGS), len(vocabulary)
    tagger = CategoricalHMM(k, n_features=n_features).fit_supervised(X, states, lengths, k=0.1)
    start = [getattr(tagger, name).copy() for name in PARAMETERS]

    def with_start(model):
        for name, value in zip(PARAMETERS, start, strict=True):
            setattr(model, name, value.copy())
        return model

    ours = with_start(CategoricalHMM(k, n_features=n_features))
    theirs = with_start(ReferenceHMM(k, n_features=n_features))
    size = f"Brown, {len(lengths):,} sentences, {X.shape[0]:,} words, K={k}, V={n_features:,}"
    print(f"CategoricalHMM on {size}:")
    report(
        "HMM Viterbi (decode)", lambda: ours.decode(X, lengths), lambda: theirs.decode(X, lengths), against="hmmlearn"
    )
    report(
        "HMM log-likelihood (score, forward)",
        lambda: ours.score(X, lengths),
        lambda: theirs.score(X, lengths),
        against="hmmlearn",
    )
    report(
        "HMM posteriors (score_samples, forward-backward)",
        lambda: ours.score_samples(X, lengths),
        lambda: theirs.score_samples(X, lengths),
        against="hmmlearn",
    )
    report(
        "HMM one Baum-Welch iteration (fit, n_iter=1)",
        lambda: with_start(CategoricalHMM(k, n_features=n_features, n_iter=1, init_params="")).fit(X, lengths),
        lambda: with_start(ReferenceHMM(k, n_features=n_features, n_iter=1, init_params="")).fit(X, lengths),
        repeat=3,
        against="hmmlearn",
    )


if __name__ == "__main__":
    main()
