"""The Sessions codec: framing of concatenated JSON, client messages, seq_num, event mapping."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moonshot.core.actions import Pass, Play
from moonshot.core.cards import card_list, parse_card
from moonshot.core.engine import Game, Phase
from moonshot.protocols.sessions.codec import (
    MAX_MESSAGE,
    SESSIONS_RULES,
    ConnectionRequest,
    DecidedMove,
    DonatedCards,
    FrameProblem,
    GameSessionRequest,
    GameType,
    Malformed,
    PlayerKind,
    SessionCodec,
    StreamDecoder,
    encode,
    parse_client_message,
    show,
    tag_with_id,
)

MESSAGES = [
    {"type": "connection_request"},
    {"type": "game_session_request", "player_tag": "p {x}", "game_type": "any", "seq_num": 0},
    {"type": "decided_move", "card": "TH", "seq_num": 8, "session_id": 2},
    {"type": "donated_cards", "cards": ["2C", "QS", "AH"], "seq_num": 4, "session_id": 2, "note": 'a "}{" b\\'},
]


def feed_all(dec: StreamDecoder, chunks: list[bytes]) -> list[object]:
    out: list[object] = []
    for c in chunks:
        out.extend(dec.feed(c))
    return out


def test_compact_and_pretty_messages_back_to_back() -> None:
    data = encode(MESSAGES[0]) + json.dumps(MESSAGES[1], indent=1).encode() + b"\n \t" + encode(MESSAGES[2])
    assert StreamDecoder().feed(data) == MESSAGES[:3]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=400), max_size=12), st.booleans())
def test_any_split_gives_the_same_messages(cuts: list[int], pretty: bool) -> None:
    data = b"".join(json.dumps(m, indent=1 if pretty else None).encode() for m in MESSAGES)
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    assert feed_all(StreamDecoder(), chunks) == MESSAGES


def test_byte_by_byte_with_multibyte_utf8() -> None:
    msg = {"type": "game_session_request", "player_tag": "żółw ♥", "seq_num": 0}
    data = json.dumps(msg, ensure_ascii=False).encode()
    assert feed_all(StreamDecoder(), [data[i : i + 1] for i in range(len(data))]) == [msg]


def test_garbage_is_reported_once_and_skipped() -> None:
    out = StreamDecoder().feed(b"hello world ]]] " + encode(MESSAGES[0]) + b"xx" + encode(MESSAGES[2]))
    assert [type(x) for x in out] == [FrameProblem, dict, FrameProblem, dict]
    assert out[1] == MESSAGES[0] and out[3] == MESSAGES[2]


def test_malformed_object_is_reported_and_the_next_one_read() -> None:
    out = StreamDecoder().feed(b'{"type": decided_move}' + encode(MESSAGES[0]))
    assert isinstance(out[0], FrameProblem) and "malformed" in out[0].reason
    assert out[1] == MESSAGES[0]


def test_over_long_message_is_dropped_while_streaming() -> None:
    dec = StreamDecoder(max_message=1024)
    huge = b'{"type":"decided_move","card":"' + b"A" * 10_000_000 + b'"}'
    out: list[object] = []
    peak = 0
    for i in range(0, len(huge), 65536):
        out.extend(dec.feed(huge[i : i + 65536]))
        peak = max(peak, dec.buffered)
    out.extend(dec.feed(encode(MESSAGES[0])))
    assert len(out) == 2 and isinstance(out[0], FrameProblem) and "longer" in out[0].reason
    assert out[1] == MESSAGES[0]
    assert peak <= 65536 + 1024  # never the whole 10 MB


def test_half_message_waits_for_the_rest() -> None:
    dec = StreamDecoder()
    data = encode(MESSAGES[2])
    assert dec.feed(data[:10]) == []
    assert dec.feed(data[10:]) == [MESSAGES[2]]


def test_parse_client_messages_liberally() -> None:
    assert parse_client_message({"type": "connection_request"}) == ConnectionRequest()
    req = parse_client_message(
        {"type": "game_session_request", "player_tag": "rp", "game_type": "HUMANS_ONLY", "seq_num": 0}
    )
    assert req == GameSessionRequest("rp", GameType.HUMANS_ONLY, PlayerKind.HUMAN, None, 0)
    req = parse_client_message({"type": "game_session_request", "lobby_code": "abc", "is_human": False})
    assert isinstance(req, GameSessionRequest) and req.kind is PlayerKind.BOT and req.lobby_code == "abc"
    assert req.player_tag == "player" and req.game_type is GameType.ANY
    assert parse_client_message({"type": "decided_move", "card": "10h", "session_id": "3", "seq_num": 9}) == (
        DecidedMove(3, 9, parse_card("TH"))
    )
    d = parse_client_message({"type": "donated_cards", "cards": ["QS", "QS", "2C"], "session_id": 1, "seq_num": 4})
    assert isinstance(d, DonatedCards) and d.count == 3 and d.cards.bit_count() == 2


def test_malformed_client_messages_name_their_session() -> None:
    m = parse_client_message({"type": "decided_move", "card": "ZZ", "session_id": 5, "seq_num": 3})
    assert isinstance(m, Malformed) and m.session_id == 5 and "bad card" in m.reason
    m = parse_client_message({"type": "decided_move", "card": 7, "session_id": 5, "seq_num": 3})
    assert isinstance(m, Malformed) and m.session_id == 5
    m = parse_client_message({"type": "donated_cards", "cards": "2C 3C 4C", "session_id": 1})
    assert isinstance(m, Malformed)
    m = parse_client_message({"type": "game_session_request", "game_type": "everyone"})
    assert isinstance(m, Malformed) and "game_type" in m.reason
    m = parse_client_message({"type": "dance"})
    assert isinstance(m, Malformed) and "unknown message type" in m.reason


def test_seq_num_is_one_counter_for_both_directions() -> None:
    c = SessionCodec(7)
    assert c.session_response("s3cret") == {
        "type": "game_session_response",
        "status": "success",
        "seq_num": 1,
        "session_id": 7,
        "session_secret": "s3cret",
    }
    assert c.stamp({"type": "start_game"})["seq_num"] == 2
    assert not c.accept_seq(2) and not c.accept_seq(None)
    assert c.accept_seq(3)
    assert c.stamp({"type": "x"})["seq_num"] == 4


def play_out(seed: int) -> Game:
    g = Game(SESSIONS_RULES, seed)
    rng = random.Random(seed)
    while not g.over:
        s = g.to_act()[0]
        if g.phase is Phase.PLAY:
            g.apply(Play.of(s, rng.choice(card_list(g.legal_play_mask(s)))))
        else:
            g.apply(Pass(s, sum(1 << c for c in rng.sample(card_list(g.hands[s]), 3))))
    return g


def test_a_whole_game_maps_to_the_seed_message_flow() -> None:
    g = play_out(3)
    tags = [tag_with_id("p", i) for i in (4, 5, 6, 7)]
    c = SessionCodec(5)
    c.seat_at(1, tags)
    msgs = c.messages([(e.for_viewer(1), False) for e in g.log if e.for_viewer(1) is not None])  # type: ignore[misc]
    types = [m["type"] for m in msgs]
    assert types[0] == "start_game" and types[-1] == "end_game"
    assert [m["seq_num"] for m in msgs] == list(range(1, len(msgs) + 1))
    rounds = [m for m in msgs if m["type"] == "start_round"]
    assert [r["pass_direction"] for r in rounds[:5]] == ["Left", "Right", "Across", "Keeper", "Left"][: len(rounds)]
    assert all(len(r["cards"]) == 13 for r in rounds)
    assert types.count("received_cards") == sum(1 for r in rounds if r["pass_direction"] != "Keeper")
    assert types.count("start_trick") == 13 * len(rounds) == types.count("end_trick")
    assert types.count("move_report") == 52 * len(rounds)
    end = msgs[-1]
    assert end["player_to_game_points"] == {tags[s]: g.totals[s] for s in range(4)}
    assert max(g.totals) > 100  # the game goes on while the highest total is <= 100
    # end_round carries the real points of the round, which add up to the totals
    sums = dict.fromkeys(tags, 0)
    for m in msgs:
        if m["type"] == "end_round":
            for t, p in m["player_to_round_points"].items():
                sums[t] += p
    assert sums == end["player_to_game_points"]
    first_trick = next(m for m in msgs if m["type"] == "start_trick")
    assert first_trick["trick_index"] == 0 and len(first_trick["player_order"]) == 4


def test_move_source_server_when_the_server_chose() -> None:
    g = play_out(1)
    e = next(e for e in g.log if type(e).__name__ == "CardPlayed")
    c = SessionCodec(0)
    c.seat_at(0, ["a(0)", "b(1)", "c(2)", "d(3)"])
    (m,) = c.messages([(e, True)])
    assert m["type"] == "move_report" and m["move_source"] == "server"
    (m,) = c.messages([(e, False)])
    assert m["move_source"] == "player"


def test_messages_are_written_back_to_back_as_the_reference_client_splits_them() -> None:
    data = encode({"type": "a", "x": {"y": 1}}) + encode({"type": "b"})
    assert b"}{" in data and b" " not in data and b"\n" not in data


def test_the_codec_is_pure() -> None:
    import ast
    from pathlib import Path

    import moonshot.protocols.sessions.codec as codec

    tree = ast.parse(Path(codec.__file__).read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not imported & {"asyncio", "socket", "time", "os", "sqlalchemy", "selectors"}


def test_resume_session_and_replayed_history() -> None:
    from moonshot.protocols.sessions.codec import ResumeSession

    msg = {"type": "resume_session", "session_id": 12, "session_secret": "abc"}
    assert parse_client_message(msg) == ResumeSession(12, "abc")
    assert isinstance(parse_client_message({"type": "resume_session"}), Malformed)
    assert isinstance(parse_client_message({"type": "resume_session", "session_id": 12}), Malformed)
    g = play_out(4)
    c = SessionCodec(12, request_seq=0)
    assert c.resume_response()["seq_num"] == 1
    c.seat_at(2, ["a(10)", "b(11)", "c(12)", "d(13)"])
    past = [(e.for_viewer(2), False) for e in g.log[:40] if e.for_viewer(2) is not None]
    msgs = c.messages(past, replayed=True)  # type: ignore[arg-type]
    assert msgs and all(m["replayed"] is True for m in msgs)
    live = c.pass_request(0b111)
    assert live["type"] == "start_round" and "replayed" not in live and live["cards"] == ["2C", "3C", "4C"]


# ------------------------------------------------------------------ fair sharing: constant work per byte
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.dictionaries(st.text(alphabet='ab{}"\\ \n', max_size=4), JSON_VALUES, max_size=4), max_size=5),
    st.lists(st.integers(min_value=0, max_value=600), max_size=20),
)
def test_any_objects_any_split_decode_as_written(objs: list[dict[str, object]], cuts: list[int]) -> None:
    """Strings full of braces, quotes and backslashes, split anywhere (an escape cut in two too)."""
    data = b"".join(json.dumps(o, ensure_ascii=False).encode() for o in objs)
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    dec = StreamDecoder()
    assert feed_all(dec, chunks) == objs
    assert not dec.partial and dec.buffered == 0


FLOODS = {
    "open braces": b"{" * 300_000,
    "open string quotes": b'{"a":' + b'"' * 300_000,
    "nested arrays": b'{"a":' + b"[" * 300_000,
    "escapes in a string": b'{"a":"' + b"\\\\\\" * 100_000,
    "empty objects inside one": b'{"a":[' + b"{}" * 150_000,
    "tiny complete objects": b"{}" * 150_000,
    "closing braces": b"}" * 300_000,
    "long string": b'{"a":"' + b"x" * 300_000,
}


@pytest.mark.parametrize("name", FLOODS)
@pytest.mark.parametrize("piece", [1, 7, 1500, 4096, 65536])
def test_the_decoder_examines_each_character_a_bounded_number_of_times(name: str, piece: int) -> None:
    """The decoder keeps its state across feeds and never rescans what it holds: its work (the
    characters its scans examine) is at most a small constant times the input, however the
    flood is cut. The old decoder copied its whole buffer on every feed (work per byte growing
    with the open object, up to 64 KiB)."""
    data = FLOODS[name]
    if piece == 1:
        data = data[:20_000]  # byte by byte is slow in any decoder; the bound is what counts
    dec = StreamDecoder()
    held = 0
    for i in range(0, len(data), piece):
        dec.feed(data[i : i + piece])
        held = max(held, dec.buffered)
    assert dec.work <= 3 * len(data) + 10
    assert held <= MAX_MESSAGE + piece


def test_too_deep_nesting_is_reported_once_and_the_next_message_read() -> None:
    dec = StreamDecoder()
    deep = b'{"a":' + b"{" * 40 + b"}" * 41
    out = feed_all(dec, [deep[:20], deep[20:], encode(MESSAGES[2])])
    assert len(out) == 2 and isinstance(out[0], FrameProblem) and "deeper than 32" in out[0].reason
    assert out[1] == MESSAGES[2]
    ok = b'{"a":' + b'{"b":' * 30 + b"1" + b"}" * 31
    assert StreamDecoder().feed(ok) == [json.loads(ok)]


# ------------------------------------------------------------------ malformed fields
ODD_VALUES = [
    "--5",
    "²",
    "٣",  # an Arabic-Indic digit: isdigit() but not ASCII
    "5" * 5000,
    "1e3",
    "0x10",
    "",
    " ",
    1.5,
    5.0,
    float("inf"),
    2**63,
    -(2**63) - 1,
    10**5000,
    [],
    [1],
    {},
    {"a": 1},
    None,
    True,
    False,
    json.loads("[" * 50 + "]" * 50),
]


@pytest.mark.parametrize("field", ["session_id", "seq_num"])
@pytest.mark.parametrize("kind", ["decided_move", "donated_cards", "resume_session"])
@pytest.mark.parametrize("value", ODD_VALUES, ids=[show(v, 12) for v in ODD_VALUES])
def test_a_malformed_id_is_malformed_never_an_exception(field: str, kind: str, value: object) -> None:
    msg = {"type": kind, "card": "2C", "cards": ["2C", "3C", "4C"], "session_id": 5, "seq_num": 3}
    msg["session_secret"] = "s"
    msg[field] = value
    m = parse_client_message(msg)
    assert isinstance(m, Malformed) and field in m.reason
    assert len(m.reason) < 200  # a 5,000-digit value is not echoed whole


def test_ids_may_be_integers_or_ascii_digit_strings() -> None:
    for sid in (5, "5", " 5 ", 2**63 - 1):
        m = parse_client_message({"type": "decided_move", "card": "2C", "session_id": sid, "seq_num": "7"})
        assert isinstance(m, DecidedMove) and m.session_id == int(str(sid)) and m.seq_num == 7


MESSAGE_FIELDS = ["session_id", "seq_num", "card", "cards", "game_type", "player_tag", "lobby_code"]
MESSAGE_FIELDS += ["player_kind", "session_secret", "type"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["decided_move", "donated_cards", "resume_session", "game_session_request", "connection_request"]),
    st.dictionaries(
        st.sampled_from(MESSAGE_FIELDS),
        JSON_VALUES | st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(ODD_VALUES),
        max_size=6,
    ),
)
def test_parse_never_raises(kind: str, fields: dict[str, object]) -> None:
    msg: dict[str, object] = {"type": kind, **fields}
    m = parse_client_message(msg)
    if isinstance(m, Malformed):
        assert len(m.reason) < 300


def test_the_session_secret_is_in_the_session_response_and_resume_needs_it() -> None:
    c = SessionCodec(9)
    assert c.session_response("abc")["session_secret"] == "abc"
    m = parse_client_message({"type": "resume_session", "session_id": 9, "session_secret": ["abc"]})
    assert isinstance(m, Malformed) and "session_secret" in m.reason
    m = parse_client_message({"type": "resume_session", "session_id": 9, "session_secret": "x" * 1000})
    assert isinstance(m, Malformed)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    seat=st.integers(0, 3),
    tag=st.text(max_size=12),
    forced=st.lists(st.booleans(), min_size=1, max_size=64),
    replayed=st.booleans(),
)
def test_frames_are_the_bytes_of_the_messages(
    seed: int, seat: int, tag: str, forced: list[bool], replayed: bool
) -> None:
    """``frames`` writes live move reports from a template: byte for byte what ``encode`` makes
    of ``messages``, whatever the players' tags hold (quotes, backslashes, any Unicode)."""
    g = play_out(seed % 1000)
    tags = [tag_with_id(tag + str(i), 10**15 + i) for i in range(4)]
    seen = [(e, forced[k % len(forced)]) for k, e in enumerate(x.for_viewer(seat) for x in g.log) if e is not None]
    a, b = SessionCodec(5, request_seq=3), SessionCodec(5, request_seq=3)
    a.seat_at(seat, tags)
    b.seat_at(seat, tags)
    frames, types = a.frames(seen, replayed)  # type: ignore[arg-type]
    msgs = b.messages(seen, replayed)  # type: ignore[arg-type]
    assert frames == [encode(m) for m in msgs]
    assert types == [m["type"] for m in msgs]
    assert a.next_seq == b.next_seq


@settings(max_examples=50, deadline=None)
@given(legal=st.integers(0, (1 << 52) - 1), seq=st.integers(0, 10**6), sid=st.integers(0, 2**48))
def test_a_move_request_frame_is_the_bytes_of_the_message(legal: int, seq: int, sid: int) -> None:
    a, b = SessionCodec(sid, request_seq=seq), SessionCodec(sid, request_seq=seq)
    assert a.move_request_frame(legal) == encode(b.move_request(legal))
    assert a.next_seq == b.next_seq
