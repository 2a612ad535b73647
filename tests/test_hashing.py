"""Python-level hashes of spec values spread: the seen table of the exact search keys on whole
states, so values that collide in bulk make every probe an equality test and the search quadratic
(issue 26: a map's hash once depended almost only on the multiset of its values)."""
from __future__ import annotations

import itertools
import random

from explorer import check, load_model
from explorer.lang.runtime import put
from explorer.lang.values import FALSE, TRUE, Map, Record, item_hash


def boolean_maps(n: int) -> list[Map]:
    return [Map({i: (TRUE if bits >> i & 1 else FALSE) for i in range(n)}) for bits in range(1 << n)]


def test_boolean_maps_over_16_keys_have_distinct_hashes():
    maps = boolean_maps(16)
    assert len(maps) == 65_536
    # a 61-bit hash of 65,536 values: a collision at all would be a 1-in-a-million event
    assert len({hash(m) for m in maps}) >= 65_530


def test_swapping_two_values_changes_the_hash():
    rng = random.Random(26)
    unchanged = 0
    for _ in range(2_000):
        values = [rng.randrange(4) for _ in range(16)]
        i, j = rng.sample(range(16), 2)
        if values[i] == values[j]:
            continue
        swapped = list(values)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        unchanged += hash(Map(enumerate(values))) == hash(Map(enumerate(swapped)))
    assert unchanged == 0


def test_records_with_permuted_field_values_have_distinct_hashes():
    fields = "abcdefgh"
    records = {Record(zip(fields, perm)) for perm in itertools.permutations(range(8))}
    assert len(records) == 40_320
    assert len({hash(r) for r in records}) >= 40_315


def test_sets_of_maps_with_permuted_values_have_distinct_hashes():
    # every set of two maps drawn from the 24 maps 0..3 -> a permutation of 0..3
    perms = [Map(enumerate(p)) for p in itertools.permutations(range(4))]
    sets = {frozenset(pair) for pair in itertools.combinations(perms, 2)}
    assert len({hash(s) for s in sets}) == len(sets) == 276


def test_put_keeps_the_hash_of_the_map_it_builds():
    rng = random.Random(7)
    m = Map({i: rng.randrange(10) for i in range(12)})
    hash(m)  # `put` updates a hash the map already has
    for _ in range(200):
        m = put(m, rng.randrange(14), rng.choice([rng.randrange(10), "s", TRUE]))
        assert hash(m) == item_hash(m) == hash(Map(dict(m))) == hash(frozenset(m.items()))


def test_a_search_over_permuted_maps_is_linear_in_probes(tmp_path):
    """The two-line spec of issue 26 at 4,096 states: right counts (time is bench/'s job)."""
    spec = tmp_path / "flip.spec"
    spec.write_text("var g in [0..11 -> BOOLEAN]\naction rotate: g' = {i: g[(i + 1) % 12] for i in 0..11}\n")
    r = check(load_model(str(spec)), deadlock=False)
    assert (r.verdict, r.distinct, r.generated, r.depth) == ("holds", 4_096, 8_192, 1)
