"""The discrete-event core: clock, processes, message histories, delivery order."""

from __future__ import annotations

import datetime as dt

import pytest
from sim_helpers import capture, put, world

from dlqlens.sim import Join, Simulation, SimulationError, Wait
from dlqlens.sim.qmgr import KEEP_FIRST, MAX_EVENTS, SimMessage


def test_clock_is_in_hundredths_and_formats_mq_put_date_and_time():
    """MQMD "PutDate (MQCHAR8)", "PutTime (MQCHAR8)": YYYYMMDD, HHMMSSTH (tenths,
    hundredths), UTC."""
    sim = Simulation(0, dt.datetime(2024, 12, 31, 23, 59, 58, tzinfo=dt.timezone.utc))
    sim.run(1.5)
    assert sim.now == 150
    assert sim.put_date_time() == ("20241231", "23595950")
    assert sim.iso() == "2024-12-31T23:59:59.50Z"
    assert sim.put_date_time(sim.now + 55) == ("20250101", "00000005")
    with pytest.raises(SimulationError):
        Simulation(0, dt.datetime(2024, 1, 1))  # naive datetimes are refused


def test_processes_sleep_wait_and_join_in_order():
    sim, qm = world()
    q = qm.define_qlocal("Q")
    log = []

    def sleeper():
        yield 1.25
        log.append(("slept", sim.now))

    def waiter():
        woken = yield Wait(q, 10)
        log.append(("woken", woken, sim.now))
        woken = yield Wait(q, 2)
        log.append(("timeout", woken, sim.now))

    def joiner(p):
        yield Join(p)
        log.append(("joined", sim.now))

    s = sim.process(sleeper())
    sim.process(waiter())
    sim.process(joiner(s))
    sim.at(3, lambda: put(qm, "Q"))
    sim.run(20)
    assert log == [("slept", 125), ("joined", 125), ("woken", True, 300), ("timeout", False, 500)]


def test_sleeps_shorter_than_a_tick_keep_their_sum_and_their_rate():
    """A producer pacing 400 puts a second (0.0025 s apart) must put 400 a
    second, not all at once: each sleep is rounded on the process's own exact
    timeline, never by more than half a tick."""
    sim = Simulation(0)
    times = []

    def pacer():
        for _ in range(1000):
            yield 0.0025
            times.append(sim.now)

    sim.process(pacer())
    sim.run(100)
    assert times[-1] == 250  # 1000 x 0.0025 s = 2.5 s
    exact = [round((i + 1) * 0.25, 6) for i in range(1000)]  # in ticks
    assert all(abs(t - e) <= 0.5 for t, e in zip(times, exact))
    assert times == sorted(times)


def test_exponential_gaps_keep_the_stated_rate():
    """The long-run rate of expovariate(rate) sleeps is ``rate``, also far
    above the clock's 100 ticks a second (the scenarios' producers)."""
    for rate in (20.0, 667.0, 5000.0):
        sim = Simulation(3)
        done = []

        def producer():
            for _ in range(20000):
                yield sim.rng.expovariate(rate)
            done.append(sim.seconds)

        sim.process(producer())
        sim.run(10_000)
        assert done and abs(done[0] - 20000 / rate) / (20000 / rate) < 0.03, (rate, done)


def test_same_seed_same_random_choices():
    a, b = Simulation(42), Simulation(42)
    assert [a.rng.random() for _ in range(5)] == [b.rng.random() for _ in range(5)]


def test_long_histories_keep_their_start_and_their_end():
    sim = Simulation(0)
    m = SimMessage({"MsgId": b""})
    for i in range(1000):
        m.log(sim, "QM1", "x", "step", i=i)
    assert len(m.events) <= MAX_EVENTS
    assert [e["i"] for e in m.events[:KEEP_FIRST]] == list(range(KEEP_FIRST))
    marker = m.events[KEEP_FIRST]
    assert marker["event"] == "elided"
    assert KEEP_FIRST + marker["count"] + len(m.events) - KEEP_FIRST - 1 == 1000
    assert m.events[-1]["i"] == 999


def test_capture_order_is_priority_then_arrival_and_matches_message_numbers(tmp_path):
    """Delivery order of MSGDLVSQ(PRIORITY): higher priority first, FIFO within a priority;
    the decoders number messages in that (file) order."""
    sim, qm = world()
    qm.define_qlocal("Q")
    for i, prio in enumerate([0, 5, 9, 5, 0, 9]):
        put(qm, "Q", Priority=prio, body=f"m{i}".encode())
    gt, rows = capture(sim, tmp_path, [("QM1", "Q")], fmt="dmpmqmsg")
    assert [r["payload"] for r in rows] == [b"m2", b"m5", b"m1", b"m3", b"m0", b"m4"]
    assert [g["md"]["Priority"] for g in gt] == [9, 9, 5, 5, 0, 0]
    numbers = [r["message_number"] for r in rows]
    assert numbers == [g["message_number"] for g in gt] == [1, 2, 3, 4, 5, 6]


def test_fifo_queue_captures_in_arrival_order(tmp_path):
    sim, qm = world()
    qm.define_qlocal("Q", msgdlvsq="FIFO")
    for i, prio in enumerate([0, 5, 9]):
        put(qm, "Q", Priority=prio, body=f"m{i}".encode())
    gt, rows = capture(sim, tmp_path, [("QM1", "Q")])
    assert [r["payload"] for r in rows] == [b"m0", b"m1", b"m2"]
    assert [r["md"]["Priority"] for r in rows] == [0, 5, 9]  # the MQMD keeps the priority


def test_unknown_queue_attributes_and_values_are_refused():
    sim, qm = world()
    with pytest.raises(SimulationError, match="unknown attribute"):
        qm.define_qlocal("Q", maxdeepth=3)
    with pytest.raises(SimulationError, match="TRIGTYPE"):
        qm.define_qlocal("Q", trigtype="SOMETIMES")
