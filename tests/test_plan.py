from pathlib import Path

from conftest import stored_run

from mpiarena.impls import Implementation
from mpiarena.platform.plan import make_plan
from mpiarena.suites import Suite, VariantSpec


def _impl(name: str, family: str) -> Implementation:
    return Implementation(name, family, "1.0", "user", Path("/x/mpicc"), Path("/x/mpiexec"))


SUITE = Suite("t", "", ("init", "pingpong", "bcast"), (8, 1024), (2, 3), init_launches=2,
              launches=3,
              variants=(VariantSpec("openmpi", "tcp", (("OMPI_MCA_btl", "self,tcp"),)),))
IMPLS = [_impl("a-1", "mpich"), _impl("b-1", "openmpi")]


def test_variants_are_compared_like_implementations():
    plan = make_plan(SUITE, IMPLS, seed=7)
    assert [v.id for v in plan.variants] == ["a-1", "b-1", "b-1:tcp"]
    assert dict(plan.variants[2].env) == {"OMPI_MCA_btl": "self,tcp"}


def _turns(rnd):
    return [t for s in rnd.sessions for t in s.turns]


def test_implementations_take_turns_cell_by_cell_inside_each_launch():
    plan = make_plan(SUITE, IMPLS, seed=7)
    for rnd in plan.rounds:
        for session in rnd.sessions:
            for i in range(0, len(session.turns), 3):
                block = session.turns[i:i + 3]
                assert len({c.cell for c, _ in block}) == 1
                assert {v.id for _, v in block} == {"a-1", "b-1", "b-1:tcp"}


def test_launch_i_of_every_variant_comes_before_launch_i_plus_1_of_any():
    exclusive = Suite("t", "", ("pingpong",), (8, 64), (2,), launches=4,
                      variants=(VariantSpec("mpich", "thread", exclusive=True),))
    for rnd in make_plan(exclusive, IMPLS, seed=3).rounds:
        indices = [s.index for s in rnd.sessions]
        assert indices == sorted(indices) and set(indices) == {0, 1, 2, 3}
        for i in range(4):
            here = [s for s in rnd.sessions if s.index == i]
            assert {v.id for s in here for v in s.variants} == {"a-1", "b-1", "a-1:thread"}
            assert any(s.variants == [v] for s in here for v in s.variants
                       if v.id == "a-1:thread")  # alone: no other job alive
        orders = {tuple(v.id for v in s.variants) for s in rnd.sessions if len(s.variants) > 1}
        assert len(orders) > 1  # variants start in a shuffled order


def test_point_to_point_only_at_two_ranks_and_collectives_at_each():
    plan = make_plan(SUITE, IMPLS, seed=7)
    by_np = {r.np: {c.cell.bench for c, _ in _turns(r)} for r in plan.rounds}
    assert by_np == {2: {"pingpong", "bcast"}, 3: {"bcast"}}
    assert all(len(r.startups) == 2 * 3 for r in plan.rounds)
    assert all(len(r.sessions) == 3 for r in plan.rounds)


def test_order_is_shuffled_and_reproducible_from_the_seed():
    first = [(c, v.id) for r in make_plan(SUITE, IMPLS, seed=11).rounds for c, v in _turns(r)]
    again = [(c, v.id) for r in make_plan(SUITE, IMPLS, seed=11).rounds for c, v in _turns(r)]
    other = [(c, v.id) for r in make_plan(SUITE, IMPLS, seed=12).rounds for c, v in _turns(r)]
    assert first == again
    assert first != other


def test_bcast_ack_is_not_planned_at_one_rank():
    suite = Suite("t", "", ("bcast", "bcast-ack"), (8,), (1, 2, 3))
    by_np = {r.np: {c.cell.bench for c, _ in _turns(r)}
             for r in make_plan(suite, IMPLS, seed=7).rounds}
    assert by_np == {1: {"bcast"}, 2: {"bcast", "bcast-ack"}, 3: {"bcast", "bcast-ack"}}


def test_a_plan_is_priced_at_this_machines_earlier_runs(tmp_path):
    """run --dry-run's estimate: launches and cell-launches per variant at the rates an earlier
    run here stored (a variant of one: its implementation's), times that run's share of time
    the parts did not hold; another host's runs priced nothing."""
    from mpiarena.analysis.estimate import estimate, planned
    from mpiarena.base.records import HarnessTime
    from mpiarena.store import Store

    plan = make_plan(SUITE, IMPLS, seed=7)
    shares = {p.variant: (p.launches, p.cells) for p in planned(plan)}
    # 2 rank counts: 2 start-up launches and 3 launches a variant; in each launch pingpong at
    # 2 ranks and bcast at 2 and 3, at 2 sizes
    assert shares == {v: (2 * (2 + 3), 3 * (2 + 4)) for v in ("a-1", "b-1", "b-1:tcp")}
    store = Store(tmp_path / "s.db")
    run = stored_run(store, "t")
    store.set_harness(run, 2 * 24.8, {  # the parts (12.4 s a variant) hold half of the wall
        "a-1": HarnessTime(launches=10, cells=24, launching=10.0, cell_wall=2.4),
        "b-1": HarnessTime(launches=10, cells=24, launching=5.0, quitting=5.0, storing=2.4)})
    host = store.runs()[0][0].host
    est = estimate(plan, [r for r, _ in store.runs()], host)
    # each variant: 10 launches at 1 s and 18 cell-launches at 0.1 s; b-1:tcp at b-1's
    assert est.seconds is not None and abs(est.seconds - 2 * 3 * 11.8) < 1e-9
    assert (est.runs, est.unmeasured) == (1, ())
    assert estimate(plan, [r for r, _ in store.runs()], "elsewhere").seconds is None
