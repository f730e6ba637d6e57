"""kierki-client: its command line, the user texts, and both players against a scripted server."""

from __future__ import annotations

import asyncio
import io
import socket
from collections.abc import Awaitable, Callable

import pytest

from moonshot.core.cards import parse_card
from moonshot.protocols.kierki.auto import ClientState
from moonshot.protocols.kierki.client import (
    ClientOptions,
    KierkiClient,
    UsageError,
    card_text,
    describe,
    main,
    parse_args,
)
from moonshot.protocols.kierki.codec import parse_message


def test_parameters_in_any_order_last_wins() -> None:
    o = parse_args(["-a", "-W", "-p", "2000", "-h", "example.org"])
    assert (o.host, o.port, o.seat, o.auto, o.family) == ("example.org", 2000, 3, True, socket.AF_UNSPEC)
    o = parse_args(["-N", "-h", "a", "-p", "1", "-4", "-6", "-S", "-p", "9", "-h", "::1"])
    assert (o.host, o.port, o.seat, o.auto, o.family) == ("::1", 9, 2, False, socket.AF_INET6)
    assert parse_args(["-h", "x", "-p", "5", "-E", "-4"]).family == socket.AF_INET
    assert parse_args(["-h", "[::1]", "-p", "5", "-E"]).host == "::1"


def test_bot_option_picks_the_automatic_players_policy() -> None:
    assert parse_args(["-h", "x", "-p", "5", "-N", "-a"]).bot == "heuristic"
    o = parse_args(["--bot", "search", "-a", "-h", "x", "-p", "5", "-S"])
    assert (o.bot, o.auto, o.seat) == ("search", True, 2)
    assert KierkiClient(o, io.StringIO()).bot.name == "search"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        ([], "host"),
        (["-p", "5", "-N"], "host (-h <host>) is required"),
        (["-h", "x", "-N"], "port (-p <port>) is required"),
        (["-h", "x", "-p", "5"], "a seat is required"),
        (["-h", "x", "-p", "0", "-N"], "bad port"),
        (["-h", "x", "-p", "http", "-N"], "bad port"),
        (["-h", "x", "-p", "65536", "-N"], "bad port"),
        (["-h", "x", "-p", "5", "-N", "-X"], "unknown parameter"),
        (["-h", "x", "-p", "5", "-N", "extra"], "unknown parameter"),
        (["-h"], "needs a value"),
        (["-h", "x", "-p", "5", "-N", "-a", "--bot"], "--bot needs a bot name"),
        (["-h", "x", "-p", "5", "-N", "-a", "--bot", "shark"], "unknown bot 'shark'"),
    ],
)
def test_bad_invocations_say_why(argv: list[str], words: str) -> None:
    with pytest.raises(UsageError) as e:
        parse_args(argv)
    assert words in str(e.value)


def test_help_prints_every_parameter_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kierki-client") and all(f in out for f in ("-h <host>", "-p <port>", "-a", "--bot"))
    assert main(["-N", "--help"]) == 0 and "usage" in capsys.readouterr().out
    # a value that reads --help is a value: here a host name, and the usage error names what is missing
    assert main(["-h", "--help"]) == 1 and "port" in capsys.readouterr().out


def test_main_exits_1_with_a_message_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-h", "localhost"]) == 1
    out = capsys.readouterr().out
    assert "required" in out and "usage: kierki-client" in out


def test_a_refused_connection_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        assert main(["-h", "127.0.0.1", "-p", str(port), "-N", "-a"]) == 1
    assert "cannot connect" in capsys.readouterr().out


# ----------------------------------------------------------------------------- the spec's user texts
def texts(*lines: str, seat: int = 0) -> list[str | None]:
    st = ClientState(seat)
    out = []
    for line in lines:
        msg = parse_message(line)
        st.on_message(msg)
        out.append(describe(msg, st))
    return out


def test_user_texts_follow_the_spec() -> None:
    got = texts(
        "BUSYNE",
        "DEAL3E9H5DKS8CQC3S10D7H2DJD6S4CAC",
        "TRICK59D8D",
        "WRONG5",
        "TAKEN510CJCQDQCN",
        "SCOREE0N15S0W5",
        "TOTALN15E0S0W23",
    )
    assert got == [
        "Place busy, list of busy places received: N, E.",
        "New deal 3: starting place E, your cards: 9H, 5D, KS, 8C, QC, 3S, 10D, 7H, 2D, JD, 6S, 4C, AC.",
        "Trick: (5) 9D, 8D\nAvailable: 4C, 8C, QC, AC, 2D, 5D, 10D, JD, 7H, 9H, 3S, 6S, KS",
        "Wrong message received in trick 5.",
        "A trick 5 is taken by N, cards 10C, JC, QD, QC.",
        "The scores are:\nN | 15\nE | 0\nS | 0\nW | 5",
        "The total scores are:\nN | 15\nE | 0\nS | 0\nW | 23",
    ]


def test_an_empty_trick_reads_naturally() -> None:
    assert texts("DEAL1N2C3C4C5C6C7C8C9C10CJCQCKCAC", "TRICK1")[1] == (
        "Trick: (1) \nAvailable: 2C, 3C, 4C, 5C, 6C, 7C, 8C, 9C, 10C, JC, QC, KC, AC"
    )


def test_card_text_lists_with_comma_and_space() -> None:
    assert card_text([parse_card("10H"), parse_card("2C")]) == "10H, 2C"
    assert card_text(0) == ""


def test_commands_cards_tricks_and_unknown() -> None:
    out = io.StringIO()
    c = KierkiClient(ClientOptions("x", 1, 0), out)
    for line in ("DEAL1N2C3C4C5C6C7C8C9C10CJCQCKCAC", "TAKEN12C3D4D5DN", "TAKEN23C3H4H5HE"):
        c.state.on_message(parse_message(line))
    c.command("cards")
    c.command("tricks")
    c.command("dance")
    c.command("!ZZ")
    lines = out.getvalue().splitlines()
    assert lines[0] == "4C, 5C, 6C, 7C, 8C, 9C, 10C, JC, QC, KC, AC"
    assert lines[1] == "2C, 3D, 4D, 5D"  # only the tricks N took, one per line
    assert lines[2].startswith("Unknown command 'dance'")
    assert lines[3].startswith("Not a card: 'ZZ'")


# ----------------------------------------------------------------------------- against a scripted server
Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def play_against(script: Script, auto: bool, commands: list[str] | None = None) -> tuple[int, str, list[str]]:
    """Run the client against ``script``; returns its exit code, its output and what the server read."""
    heard: list[str] = []

    async def scenario() -> tuple[int, str]:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            async def read_line() -> str:
                line = (await asyncio.wait_for(reader.readline(), 5)).decode().rstrip("\r\n")
                heard.append(line)
                return line

            reader.read_line = read_line  # type: ignore[attr-defined]
            try:
                await script(reader, writer)
            finally:
                writer.close()

        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        out = io.StringIO()
        client = KierkiClient(ClientOptions("127.0.0.1", port, 0, socket.AF_INET, auto), out)
        queue: asyncio.Queue[str | None] | None = None
        if commands is not None:
            queue = asyncio.Queue()
            for cmd in commands:
                queue.put_nowait(cmd)
        async with server:
            code = await asyncio.wait_for(client.run(queue), 10)
        return code, out.getvalue()

    code, out = asyncio.run(scenario())
    return code, out, heard


DEAL = "DEAL1N2C3C4C5C6C7C8C9C10CJCQCKCAC"


async def _deal_and_trick(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> str:
    assert await reader.read_line() == "IAMN"  # type: ignore[attr-defined]
    # several messages in one segment, with an invalid one the client must ignore
    writer.write(f"{DEAL}\r\nNONSENSE\r\nTRICK1\r\n".encode())
    await writer.drain()
    return str(await reader.read_line())  # type: ignore[attr-defined]


def test_automatic_client_plays_retries_after_wrong_and_exits_0_at_the_end() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await _deal_and_trick(reader, writer)
        writer.write(b"WRONG1\r\n")
        await writer.drain()
        second = await reader.read_line()  # type: ignore[attr-defined]
        assert first != second and first.startswith("TRICK1") and second.startswith("TRICK1")
        writer.write(b"TAKEN12C3D4D5DN\r\nSCOREN1E0S0W0\r\nTOTALN1E0S0W0\r\n")
        await writer.drain()

    code, out, heard = play_against(script, auto=True)
    assert code == 0
    report = out.splitlines()
    assert report[0].endswith("] IAMN") and report[-1].endswith("] TOTALN1E0S0W0")
    assert any(line.endswith("] NONSENSE") for line in report)  # the report shows what came in
    assert all(line.startswith("[127.0.0.1:") for line in report)
    assert len(heard) == 3


def test_a_repeated_trick_is_answered_again() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await _deal_and_trick(reader, writer)
        writer.write(b"TRICK1\r\n")
        await writer.drain()
        assert await reader.read_line() == first  # type: ignore[attr-defined]
        writer.write(b"SCOREN1E0S0W0\r\nTOTALN1E0S0W0\r\n")

    code, _, _ = play_against(script, auto=True)
    assert code == 0


def test_an_extra_answer_to_a_repeated_trick_does_not_start_a_cascade() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await _deal_and_trick(reader, writer)
        writer.write(b"TRICK1\r\n")  # a repetition that crossed the answer
        await writer.drain()
        assert await reader.read_line() == first  # type: ignore[attr-defined]
        writer.write(b"WRONG1\r\n")  # for the second, unprompted copy: no new card follows
        await writer.drain()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader.readline(), 0.3)
        writer.write(b"TAKEN12C3D4D5DN\r\nSCOREN1E0S0W0\r\nTOTALN1E0S0W0\r\n")

    code, _, heard = play_against(script, auto=True)
    assert code == 0
    assert len(heard) == 3  # IAM and two copies of the same card, nothing more


def test_a_confused_server_does_not_crash_the_client() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read_line()  # type: ignore[attr-defined]
        writer.write(b"TRICK1\r\nTAKEN1\r\nDEAL9X\r\n\xff\xfe\r\nTRICK3AS\r\n")  # no DEAL yet: nothing to play
        await writer.drain()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reader.readline(), 0.3)

    code, out, heard = play_against(script, auto=True)
    assert code == 1 and heard == ["IAMN"]
    assert "TRICK3AS" in out


def test_busy_and_a_game_cut_short_exit_1() -> None:
    async def busy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read_line()  # type: ignore[attr-defined]
        writer.write(b"BUSYNESW\r\n")

    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _deal_and_trick(reader, writer)

    code, out, _ = play_against(busy, auto=False)
    assert code == 1 and "Place busy, list of busy places received: N, E, S, W." in out
    code, out, _ = play_against(cut, auto=True)
    assert code == 1


def test_interactive_client_sends_what_the_user_types() -> None:
    async def script(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert await _deal_and_trick(reader, writer) == "TRICK110C"
        writer.write(b"TAKEN110C2D3D4DN\r\nSCOREN1E0S0W0\r\nTOTALN1E0S0W0\r\n")

    async def later(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await script(reader, writer)

    code, out, _ = play_against(later, auto=False, commands=["cards", "!10C"])
    assert code == 0
    assert "New deal 1: starting place N, your cards: 2C, 3C" in out
    assert "A trick 1 is taken by N, cards 10C, 2D, 3D, 4D." in out
    assert "The total scores are:\nN | 1\nE | 0\nS | 0\nW | 0" in out
    assert "[" not in out  # no game report in interactive mode
