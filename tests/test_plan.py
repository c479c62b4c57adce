from pathlib import Path

from mpiarena.impls import Implementation
from mpiarena.plan import make_plan
from mpiarena.suites import Suite, VariantSpec


def _impl(name: str, family: str) -> Implementation:
    return Implementation(name, family, "1.0", "user", Path("/x/mpicc"), Path("/x/mpiexec"))


SUITE = Suite("t", "", ("init", "pingpong", "bcast"), (8, 1024), (2, 3), init_launches=2,
              variants=(VariantSpec("openmpi", "tcp", (("OMPI_MCA_btl", "self,tcp"),)),))
IMPLS = [_impl("a-1", "mpich"), _impl("b-1", "openmpi")]


def test_variants_are_compared_like_implementations():
    plan = make_plan(SUITE, IMPLS, seed=7)
    assert [v.id for v in plan.variants] == ["a-1", "b-1", "b-1:tcp"]
    assert dict(plan.variants[2].env) == {"OMPI_MCA_btl": "self,tcp"}


def test_implementations_take_turns_cell_by_cell():
    plan = make_plan(SUITE, IMPLS, seed=7)
    for rnd in plan.rounds:
        for i in range(0, len(rnd.turns), 3):
            block = rnd.turns[i:i + 3]
            assert len({c for c, _ in block}) == 1
            assert {v.id for _, v in block} == {"a-1", "b-1", "b-1:tcp"}


def test_point_to_point_only_at_two_ranks_and_collectives_at_each():
    plan = make_plan(SUITE, IMPLS, seed=7)
    by_np = {r.np: {c.bench for c, _ in r.turns} for r in plan.rounds}
    assert by_np == {2: {"pingpong", "bcast"}, 3: {"bcast"}}
    assert all(len(r.launches) == 2 * 3 for r in plan.rounds)


def test_order_is_shuffled_and_reproducible_from_the_seed():
    first = [(c, v.id) for r in make_plan(SUITE, IMPLS, seed=11).rounds for c, v in r.turns]
    again = [(c, v.id) for r in make_plan(SUITE, IMPLS, seed=11).rounds for c, v in r.turns]
    other = [(c, v.id) for r in make_plan(SUITE, IMPLS, seed=12).rounds for c, v in r.turns]
    assert first == again
    assert first != other


def test_bcast_ack_is_not_planned_at_one_rank():
    suite = Suite("t", "", ("bcast", "bcast-ack"), (8,), (1, 2, 3))
    by_np = {r.np: {c.bench for c, _ in r.turns} for r in make_plan(suite, IMPLS, seed=7).rounds}
    assert by_np == {1: {"bcast"}, 2: {"bcast", "bcast-ack"}, 3: {"bcast", "bcast-ack"}}
