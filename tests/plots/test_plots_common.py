"""The shared helpers of dlqlens.plots, without Spark: bin widths, labels, figures."""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from dlqlens.plots import common as C

PLOTS = Path(C.__file__).parent


@pytest.mark.parametrize("span, width", [
    (0, 1), (13, 1), (59, 1), (100, 2), (290, 5), (3600, 120), (4 * 86400 + 7200, 7200),
    (30 * 86400, 86400), (400 * 86400, 7 * 86400), (80 * 365 * 86400, 2 * 365 * 86400),
])
def test_auto_bin_width_is_nice_and_makes_at_most_60_bins(span, width):
    assert C.bin_width(span) == width
    assert span / width + 1 <= C.MAX_AUTO_BINS


@pytest.mark.parametrize("freq, seconds", [
    ("5min", 300), ("1 day", 86400), ("10s", 10), (dt.timedelta(hours=6), 21600), (15, 15),
    (0.5, 0.5),
])
def test_explicit_freq(freq, seconds):
    assert C.bin_width(60, freq) == seconds


@pytest.mark.parametrize("freq", ["soon", 0, -5, dt.timedelta(0), [1], True, float("nan")])
def test_bad_freq_is_refused(freq):
    with pytest.raises(ValueError, match="freq"):
        C.bin_width(3600, freq)


def test_freq_making_too_many_bins_is_refused():
    with pytest.raises(ValueError, match="at most 5,000"):
        C.bin_width(86400, "1s")


@pytest.mark.parametrize("seconds, label", [
    (1, "1 s"), (10, "10 s"), (60, "1 min"), (300, "5 min"), (3600, "1 h"), (21600, "6 h"),
    (86400, "1 day"), (7 * 86400, "7 days"), (0.5, "0.5 s"), (90, "90 s"),
])
def test_width_label(seconds, label):
    assert C.width_label(seconds) == label


def test_shorten_keeps_start_and_end():
    s = C.shorten("PAYMENTS.INBOUND.VERY.LONG.QUEUE.NAME.FOR.TESTS @ QM.PROD", 20)
    assert len(s) == 20 and s.startswith("PAYMENTS.") and s.endswith("QM.PROD") and "\u2026" in s
    assert C.shorten("SHORT", 20) == "SHORT"


def test_display_labels_never_merge_two_names():
    a = "A" * 30 + ".ONE." + "B" * 30
    b = "A" * 30 + ".TWO." + "B" * 30
    out = C.display_labels([a, b, "other (3 queues)"], 20)
    assert len(set(out)) == 3
    assert all(len(x) < len(a) for x in out[:2])  # still shortened, only as much as needed
    assert C.display_labels(["X", "X", "X"]) == ["X", "X [2]", "X [3]"]


def test_text_escapes_controls_and_names_blanks():
    assert C.text("Q\x1b[31m\nX") == "Q\\x1b[31m\\nX"
    assert C.text("   ") == "(blank)"
    assert C.text(None) == "(blank)"


def test_check_top():
    assert C.check_top(3) == 3
    for bad in (0, -1, 2.5, "8", True):
        with pytest.raises(ValueError, match="top"):
            C.check_top(bad)


def test_dimension_names():
    assert C.dimension("reason") is C.REASON
    with pytest.raises(ValueError, match="reason, destination, source, putter"):
        C.dimension("colour")


def test_empty_figure_says_no_messages_and_draws():
    fig = C.empty_figure("Some title")
    assert isinstance(fig, Figure)
    assert "no messages" in [t.get_text() for t in fig.findobj(Text)]
    fig.savefig(io.BytesIO(), format="png")


def test_finish_turns_mathtext_off_on_every_text():
    fig = C.new_figure()
    ax = fig.add_subplot()
    ax.set_yticks([0, 1], ["$x$", "QM$1$"])
    ax.set_title("$\\alpha$")
    C.finish(fig)
    fig.savefig(io.BytesIO(), format="png")
    texts = [t for t in fig.findobj(Text) if "$" in t.get_text()]
    assert {t.get_text() for t in texts} >= {"$x$", "QM$1$", "$\\alpha$"}
    for t in texts:
        assert t.get_parse_math() is False and t.get_usetex() is False
        assert t._preprocess_math(t.get_text()) == (t.get_text(), False)


def test_no_pyplot_and_no_collect_of_a_capture_in_the_package():
    for path in PLOTS.glob("*.py"):
        src = path.read_text(encoding="utf-8")
        assert "import pyplot" not in src and "matplotlib.pyplot" not in src, path
        assert "plt." not in src, path
        assert "toPandas" not in src, path
        # rows reach the driver only through common.collect
        if path.name != "common.py":
            assert ".collect()" not in src, path


def test_display_labels_grow_at_most_twice_then_number():
    a = "A" * 50 + "1" + "B" * 50
    b = "A" * 50 + "2" + "B" * 50
    out = C.display_labels([a, b], 20)
    assert len(set(out)) == 2 and out[1].endswith(" [2]")
    assert all(len(x) <= 40 + 4 for x in out)


def test_finish_leaves_numeric_log_ticks_alone():
    fig = C.new_figure()
    ax = fig.add_subplot()
    ax.bar([1, 10, 1000], [1, 2, 3])
    ax.set_xscale("log")
    C.finish(fig)
    fig.savefig(io.BytesIO(), format="png")
    shown = [t for t in ax.get_xticklabels() if t.get_text()]
    assert shown and all(t.get_parse_math() for t in shown)  # 10^k drawn as mathematics
