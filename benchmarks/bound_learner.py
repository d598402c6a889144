"""How far could ratings take a topic at best? Bounds for the targets of eval_feedback.py.

    pip install scikit-learn [wordllama]      # for this script only; watcher needs neither
    # (in a venv of its own: wordllama brings httpx2, which Starlette's test client then
    # prefers to httpx, and one of watcher's web tests fails beside it)
    python benchmarks/bound_learner.py [--topics rag,robot-learning,visual-generation]

``eval_feedback.py`` measures watcher's learner; this script asks what *any* learner over the
same words could do on the same judged corpus, with far more help than a reader gives:

* **cold start bound**: a standard word classifier (tf-idf of words and word pairs, logistic
  regression, classes balanced; scikit-learn) trained on the judgements of *every* paper of the
  first 20 corpus days (a reader rates only what was shown), scored on the last 10 days with the
  threshold that gives the best F1 *chosen on those days' answers* (no learner knows it). The
  cold-start target is 90% of this bound over the last 10 days (eval_feedback.py);
* **cold start from the reader's ratings**: what the same classifier reaches when it has only
  what a cold-start reader rated (eval_feedback.py's ``cold+ratings`` run, watcher's learner
  deciding what was shown) in the first 20 days, scored on every paper of the last 10: with
  the cut chosen on the answers, and with the cut a learner can set (the best F1 of the rated
  papers held out). A cold start cannot do better than the first with these words;
* **ratings frontier**: the same classifier trained on the query's matches of the first 20 days
  (what a reader who rates every digest has rated), on the query's matches of the last 10: the
  share of their false positives it can drop while losing at most 2 points of the days' recall,
  again with the best threshold chosen on the answers. The ratings target is a 15% cut at most
  2 points lower recall;
* **ratings frontier, day by day**: as ``eval_feedback.py`` measures, over all 30 days: each
  day's query matches scored by the classifier trained on the query's matches of the days
  before (what the reader has rated by then; none before a profile has 8 disliked), the scores
  made comparable across days as standard scores against the training liked papers' held-out
  scores; the share of the 30 days' false positives that the best cut *chosen on the answers*
  drops for at most 2 points of recall. No learner that sets its cut without the answers does
  better with these words;
* **dense similarity** (with ``wordllama`` installed, the sentence-embedding model whose weights
  ship in its wheel): how well similarity to the first 30 liked papers ranks the last 10 days'
  papers (ROC AUC, average precision), the model's embeddings against tf-idf, and the cold
  start bound with a classifier over the embeddings instead of the words.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from eval_feedback import TOPICS, day_papers, read_judgements  # noqa: E402
from watcher.config import Profile  # noqa: E402
from watcher.matching.match import ProfileMatcher, prepare  # noqa: E402

FIRST = 20  # days to learn from; the rest are scored
RECALL_LOSS = 0.02
SETTINGS = [((1, 1), 1.0), ((1, 1), 10.0), ((1, 2), 1.0), ((1, 2), 10.0)]  # n-grams, C: the best is reported


def best_f1(y, s) -> float:
    from sklearn.metrics import precision_recall_curve

    p, r, _ = precision_recall_curve(y, s)
    return max((2 * a * b / (a + b) for a, b in zip(p, r) if a + b), default=0.0)


def fp_cut(y, s, relevant: int) -> float:
    """The largest share of the false positives among ``s`` that a threshold drops while losing at
    most RECALL_LOSS x ``relevant`` of the relevant papers."""
    order = sorted(zip(s, y), reverse=True)
    fp_all, tp_all = sum(1 for _, t in order if not t), sum(t for _, t in order)
    allowed = int(RECALL_LOSS * relevant)
    best, tp, fp = 0.0, 0, 0
    for _, t in order:
        tp, fp = tp + t, fp + (not t)
        if tp_all - tp <= allowed and fp_all:
            best = max(best, 1 - fp / fp_all)
    return best


def tfidf(texts) -> dict:
    """The texts' tf-idf matrix for each n-gram range of SETTINGS (they do not depend on the topic)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return {ngrams: TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2,
                                    ngram_range=ngrams).fit_transform(texts)
            for ngrams in dict.fromkeys(ngrams for ngrams, _ in SETTINGS)}


def classifier_scores(matrices, y, train, test):
    """The best of SETTINGS by ``best_f1`` on ``test``: ``(scores, setting)``; ``matrices`` from
    :func:`tfidf`."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    out = []
    for ngrams, c in SETTINGS:
        x = matrices[ngrams]
        model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000).fit(x[train], y[train])
        out.append((model.decision_function(x[test]), (ngrams, c)))
    yt = np.asarray(y)[test]
    return max(out, key=lambda o: best_f1(yt, o[0]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default=",".join(TOPICS))
    args = ap.parse_args()
    try:
        import numpy as np
        from sklearn.metrics import average_precision_score, roc_auc_score
    except ImportError:
        print("bound_learner: needs scikit-learn (pip install scikit-learn)", file=sys.stderr)
        return 2
    seen, papers, day = set(), [], []
    for k, (_, ps) in enumerate(day_papers()):
        for p in ps:
            if p.key not in seen:
                seen.add(p.key)
                papers.append(p)
                day.append(k)
    texts = [f"{p.title}. {p.abstract or ''}" for p in papers]
    day = np.array(day)
    train, test = np.flatnonzero(day < FIRST), np.flatnonzero(day >= FIRST)
    matrices = tfidf(texts)
    dense = _dense(texts)
    for name in args.topics.split(","):
        judged = read_judgements(HERE / "data" / f"{name}.jsonl")
        y = np.array([judged.get(p.key, 0) for p in papers])
        print(f"== {name}: {y.sum()} relevant, {y[test].sum()} of them in the last {day.max() + 1 - FIRST} days")
        s, setting = classifier_scores(matrices, y, train, test)
        print(f"cold start bound: word classifier trained on all {len(train)} papers of days 1-{FIRST}, "
              f"best F1 on the last days {best_f1(y[test], s):.3f} (n-grams {setting[0]}, C {setting[1]:g}; "
              f"the cold-start target is 90% of it)")
        print(rated_frontier(judged, papers, day, matrices, test))
        matched = ProfileMatcher(Profile(name="q", title="q", query=TOPICS[name])).score_batch(prepare(papers))
        hits = np.array(sorted(matched))
        qtrain, qtest = hits[day[hits] < FIRST], hits[day[hits] >= FIRST]
        s, setting = classifier_scores(matrices, y, qtrain, qtest)
        base_fp = int((y[qtest] == 0).sum())
        print(f"ratings frontier: on the query's {len(qtest)} matches of the last days ({base_fp} false "
              f"positives), a word classifier trained on its {len(qtrain)} earlier matches drops at most "
              f"{fp_cut(y[qtest], s, int(y[test].sum())):.1%} of them for <= 2 points of recall (target 15%)")
        print(f"ratings frontier, day by day over all {day.max() + 1} days: at most "
              f"{daily_frontier(matrices[(1, 1)], y, day, np.array(sorted(matched))):.1%} of the false positives "
              f"for <= 2 points of recall (target 15%)")
        if dense is not None:
            liked = [i for i in range(len(papers)) if y[i]][:30]
            rest = np.array([i for i in test if i not in set(liked)])
            from sklearn.linear_model import LogisticRegression

            tf = matrices[(1, 1)]
            s = LogisticRegression(C=1.0, class_weight="balanced", max_iter=5000).fit(
                dense[train], y[train]).decision_function(dense[test])
            print(f"cold start bound with the embeddings instead of the words: best F1 {best_f1(y[test], s):.3f}")
            for label, x in (("tf-idf", tf), ("wordllama", dense)):
                centre = np.asarray(x[liked].mean(axis=0)).ravel()
                sims = np.asarray(x[rest] @ centre).ravel()
                print(f"similarity to the first 30 liked papers, {label:<9}: ROC AUC {roc_auc_score(y[rest], sims):.3f}, "
                      f"average precision {average_precision_score(y[rest], sims):.3f}")
    return 0


def rated_frontier(judged: dict, papers, day, matrices, test) -> str:
    """The cold start's frontier from what the reader rated: eval_feedback.py's ``cold+ratings``
    run (watcher's own learner decides what is shown, the reader rates it), then the word
    classifier of each of SETTINGS trained on the papers rated in days 1-FIRST alone, scored on
    every paper of the last days: its best F1 with the cut chosen on the answers, and with the
    cut at the best F1 of the rated papers held out (5 folds), as a learner must set it."""
    import tempfile
    from datetime import datetime, timezone

    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from eval_feedback import simulate
    from watcher.store import Store

    days = day_papers()
    seen: set = set()
    order = [p.key for _, ps in days for p in ps if not (p.key in seen or seen.add(p.key))]
    liked = [k for k in order if judged.get(k)][:30]
    with tempfile.TemporaryDirectory() as tmp:
        simulate(days, judged, None, True, liked, Path(tmp))
        with Store.open(Path(tmp) / "eval.db") as store:
            rows = store.rating_rows("topic")
    before = datetime.combine(days[FIRST][0], datetime.min.time(), timezone.utc)
    index = {p.key: i for i, p in enumerate(papers)}
    rated = [(index[r.paper], int(r.value == "up")) for r in rows if r.rated_at < before]
    train, labels = np.array([i for i, _ in rated]), np.array([t for _, t in rated])
    y = np.array([judged.get(p.key, 0) for p in papers])[test]
    answers, held = [], []
    for ngrams, c in SETTINGS:
        x = matrices[ngrams]
        model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000)
        out = cross_val_predict(model, x[train], labels, method="decision_function",
                                cv=StratifiedKFold(5, shuffle=True, random_state=0))
        rows_ = sorted(zip(out, labels), reverse=True)
        hit, best, cut = 0, -1.0, 0.0
        for k, (v, t) in enumerate(rows_, 1):
            hit += t
            if 2 * hit / (k + labels.sum()) > best:
                best, cut = 2 * hit / (k + labels.sum()), v
        s = model.fit(x[train], labels).decision_function(x[test])
        answers.append(best_f1(y, s))
        kept = s >= cut
        held.append(2 * (y & kept).sum() / (kept.sum() + y.sum()) if kept.sum() + y.sum() else 0.0)
    return (f"cold start from the reader's ratings: a word classifier trained on the {len(rated)} papers the "
            f"cold+ratings reader rated in days 1-{FIRST} reaches F1 {min(answers):.3f}-{max(answers):.3f} on "
            f"the last days with the cut chosen on the answers, {min(held):.3f}-{max(held):.3f} with the cut a "
            f"learner can set (the best held-out F1), over the settings {SETTINGS}")


def daily_frontier(x, y, day, matched) -> float:
    """The day-by-day ratings frontier of the module docstring."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    standard = {}
    for d in range(1, day.max() + 1):
        train, today = matched[day[matched] < d], matched[day[matched] == d]
        if (y[train] == 0).sum() < 8 or not len(today):
            continue
        model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=5000)
        held = cross_val_predict(model, x[train], y[train], method="decision_function",
                                 cv=StratifiedKFold(5, shuffle=True, random_state=0))
        liked = held[y[train] == 1]
        scores = model.fit(x[train], y[train]).decision_function(x[today])
        standard.update(zip(today, (scores - liked.mean()) / liked.std()))
    fp_all = int((y[matched] == 0).sum())
    scored = np.array(list(standard))
    if not fp_all or not len(scored):
        return 0.0
    share = fp_cut(y[scored], [standard[i] for i in scored], int(y.sum()))  # of the days scored
    return share * int((y[scored] == 0).sum()) / fp_all


def _dense(texts):
    """The texts' unit embeddings by WordLlama's packaged model (None when it is not installed);
    the weights and tokenizer ship in the wheel: nothing is fetched."""
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        print("(wordllama not installed: no dense similarity)")
        return None
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    return model.embed(texts, norm=True)


if __name__ == "__main__":
    sys.exit(main())
