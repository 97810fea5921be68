"""Context-parallel slices from a plan (plan.positions(cp_size=, cp_rank=), plan.cp_slice):
every rank's positions equal the whole batch's at its token indices, bit for bit (left-padded
batches included), and the ranks together hold every token once, HunYuan-VL's four axes too;
errors name cp_size / cp_rank and the values."""
import numpy as np
import pytest

import mrope

VISION_START, VISION_END, IMAGE = 151652, 151653, 151655
# Row 0: T3 I1x4x4 T3, 12 tokens; row 1: 8 text tokens, right-padded to 12.
IDS = [[11, 12, 13, VISION_START] + [IMAGE] * 4 + [VISION_END, 14, 15, 16],
       list(range(21, 29)) + [0] * 4]
MASK = [[1] * 12, [1] * 8 + [0] * 4]
GRID = [[1, 4, 4]]


@pytest.fixture(scope="module")
def plan():
    return mrope.Model.from_config("qwen2_vl").plan(IDS, GRID, attention_mask=MASK)


def expect_ranks_slice(whole, cp_size, rank_slice):
    """rank_slice(rank) -> (positions [3, ...], token_index [N]); whole: [3, total]."""
    held = np.zeros(whole.shape[1], np.int64)
    for rank in range(cp_size):
        positions, token_index = rank_slice(rank)
        assert positions.dtype == whole.dtype
        assert token_index.dtype == np.int64 and token_index.shape == (whole.shape[1] // cp_size,)
        np.testing.assert_array_equal(positions.reshape(len(whole), -1), whole[:, token_index])
        np.add.at(held, token_index, 1)
    assert (held == 1).all()


@pytest.mark.parametrize("cp_size", [1, 2, 3, 6])
def test_padded_ranks_slice_the_rows_padded_to_the_batch_length(plan, cp_size):
    # Every row's own tokens, then decode steps up to L = 12 (the window [0, L)).
    whole = plan.positions(0, 12).reshape(3, -1)
    if cp_size == 1:
        np.testing.assert_array_equal(plan.positions(cp_size=1, cp_rank=0), plan.positions(0, 12))

    def rank_slice(rank):
        positions = plan.positions(cp_size=cp_size, cp_rank=rank)
        assert positions.shape == (3, 2, 12 // cp_size)
        same, token_index, cu_seqlens = plan.cp_slice(cp_size, rank)
        np.testing.assert_array_equal(same, positions)
        assert cu_seqlens.tolist() == [0, 12 // cp_size, 24 // cp_size]
        return positions, token_index

    expect_ranks_slice(whole, cp_size, rank_slice)
    # The unpadded row is also the plain padded output's row (HF's positions).
    np.testing.assert_array_equal(plan.positions()[:, 0], plan.positions(0, 12)[:, 0])


@pytest.mark.parametrize("cp_size", [1, 2])  # rows of 12 and 8 tokens
def test_packed_ranks_slice_the_packed_rows(plan, cp_size):
    rows = plan.positions(0, 12)
    whole = np.concatenate([rows[:, 0, :12], rows[:, 1, :8]], axis=1)  # each row's own tokens
    cu_per_rank = [0, 12 // cp_size, 20 // cp_size]

    def rank_slice(rank):
        positions, token_index, cu_seqlens = plan.cp_slice(cp_size, rank, packed=True)
        assert positions.shape == (3, 20 // cp_size)
        assert cu_seqlens.tolist() == cu_per_rank
        return positions, token_index

    expect_ranks_slice(whole, cp_size, rank_slice)


def test_megatron_chunk_order(plan):
    # cp_size 2, L 12: chunks of 3; rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2.
    _, token_index, _ = plan.cp_slice(2, 0)
    assert token_index.tolist() == [0, 1, 2, 9, 10, 11, 12, 13, 14, 21, 22, 23]
    _, token_index, _ = plan.cp_slice(2, 1)
    assert token_index.tolist() == [3, 4, 5, 6, 7, 8, 15, 16, 17, 18, 19, 20]


def test_errors_name_cp_size_and_cp_rank(plan):
    with pytest.raises(ValueError, match=r"cp_rank=2 must be in \[0, cp_size=2\)"):
        plan.positions(cp_size=2, cp_rank=2)
    with pytest.raises(ValueError, match="cp_size=0 must be at least 1"):
        plan.cp_slice(0, 0)
    with pytest.raises(ValueError, match="give both cp_size and cp_rank"):
        plan.positions(cp_size=2)
    with pytest.raises(ValueError, match=r"length 12 must be a multiple of 2 \* cp_size = 8"):
        plan.positions(cp_size=4, cp_rank=0)
    with pytest.raises(ValueError, match="sequence 1: padded length 8 must be a multiple of 2 "
                                         "\\* cp_size = 6"):
        plan.cp_slice(3, 0, packed=True)
    with pytest.raises(ValueError, match="context parallelism does not take a window"):
        plan.positions(0, 12, cp_size=2, cp_rank=0)


# Issue 32's reproducer: row 0 left-padded (3 pads, then 11..15), row 1 unpadded.
LEFT_IDS = np.array([[0, 0, 0, 11, 12, 13, 14, 15], [21, 22, 23, 24, 25, 26, 27, 28]])
LEFT_MASK = np.array([[0, 0, 0, 1, 1, 1, 1, 1], [1] * 8])


@pytest.mark.parametrize("cp_size", [1, 2, 4])
def test_left_padded_rows_keep_every_token_in_its_column(cp_size):
    """The padded batch is cut as given: token_index = row * L + column gathers each token, and
    its slot holds get_rope_index's position for it (padding slots: get_rope_index's too)."""
    model = mrope.Model.from_config("qwen2_vl")
    whole, _ = model.get_rope_index(LEFT_IDS, attention_mask=LEFT_MASK)
    plan = model.plan(LEFT_IDS, attention_mask=LEFT_MASK)

    def rank_slice(rank):
        positions, token_index, _ = plan.cp_slice(cp_size, rank)
        np.testing.assert_array_equal(positions, plan.positions(cp_size=cp_size, cp_rank=rank))
        return positions, token_index

    expect_ranks_slice(whole.reshape(3, -1), cp_size, rank_slice)
    if cp_size == 1:  # token 11 at column 3 takes position 0, not 3
        positions, token_index, _ = plan.cp_slice(1, 0)
        assert token_index[3] == 3 and LEFT_IDS[0, 3] == 11 and (positions[:, 0, 3] == 0).all()


def test_left_padded_packed_ranks_slice_the_rows_own_tokens():
    ids = np.array([[0, 0, 0, 0, 11, 12, 13, 14], [21, 22, 23, 24, 25, 26, 27, 28]])
    mask = (ids != 0).astype(np.int64)
    model = mrope.Model.from_config("qwen2_vl")
    plan = model.plan(ids, attention_mask=mask)
    whole, _ = model.get_rope_index(ids, attention_mask=mask)
    packed = whole[:, mask == 1]  # the rows' own tokens back to back: what token_index indexes
    packed_ids = ids[mask == 1]

    def rank_slice(rank):
        positions, token_index, cu_seqlens = plan.cp_slice(2, rank, packed=True)
        assert cu_seqlens.tolist() == [0, 2, 6]
        assert (packed_ids[token_index] != 0).all()
        return positions, token_index

    expect_ranks_slice(packed, 2, rank_slice)


# HunYuan-VL: row 0 text, <start>, a 2x2 grid between its begin and end tokens, <end>, text (12
# tokens); row 1 left-padded by 4. Four axes.
HUNYUAN_IDS = [[7, 120118] + [120120] * 6 + [120119, 8, 9, 10], [0] * 4 + list(range(21, 29))]
HUNYUAN_TYPES = [[0, 0] + [1] * 6 + [0] * 4, [0] * 12]
HUNYUAN_MASK = [[1] * 12, [0] * 4 + [1] * 8]


@pytest.mark.parametrize("cp_size", [1, 2, 3, 6])
def test_hunyuan_ranks_slice_the_whole(cp_size):
    model = mrope.Model.from_config("hunyuan_vl")
    whole, _ = model.get_rope_index(HUNYUAN_IDS, HUNYUAN_TYPES, [[1, 4, 2]],
                                    attention_mask=HUNYUAN_MASK)
    plan = model.plan(HUNYUAN_IDS, HUNYUAN_TYPES, [[1, 4, 2]], attention_mask=HUNYUAN_MASK)
    assert whole.shape == (4, 2, 12)

    def rank_slice(rank):
        positions = plan.positions(cp_size=cp_size, cp_rank=rank)
        assert positions.shape == (4, 2, 12 // cp_size)
        same, token_index, _ = plan.cp_slice(cp_size, rank)
        np.testing.assert_array_equal(same, positions)
        return positions, token_index

    expect_ranks_slice(whole.reshape(4, -1), cp_size, rank_slice)
    if cp_size > 2:  # the rows' own lengths 12 and 8: packed takes cp_size 1 and 2
        return
    mask = np.array(HUNYUAN_MASK) == 1
    packed = whole[:, mask]

    def packed_slice(rank):
        positions, token_index, cu_seqlens = plan.cp_slice(cp_size, rank, packed=True)
        assert positions.shape == (4, 20 // cp_size)
        assert cu_seqlens.tolist() == [0, 12 // cp_size, 20 // cp_size]
        return positions, token_index

    expect_ranks_slice(packed, cp_size, packed_slice)
