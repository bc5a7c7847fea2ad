"""The live pages' hub: each viewer told of each round committed, a slow one dropped."""

from __future__ import annotations

from krigbot.sessions.live import LiveHub


async def test_each_viewer_of_a_game_is_told_its_rounds_in_order_and_only_its_own() -> None:
    hub = LiveHub()
    first, second, other = hub.watch(1), hub.watch(1), hub.watch(2)
    relayed: list[tuple[int, int]] = []
    hub.relay = lambda game, round_: relayed.append((game, round_))
    hub.committed(1, 4)
    hub.committed(1, 5)
    assert [await first.next(), await first.next()] == [4, 5]
    assert await second.next() == 4
    second.taken(5)  # read the game as stored: round 5 with it
    hub.committed(1, 6)
    assert await second.next() == 6
    assert relayed == [(1, 4), (1, 5), (1, 6)]  # to the other processes, as committed
    hub.heard(2, 9)  # from another process: told here, not relayed again
    assert await other.next() == 9
    assert relayed == [(1, 4), (1, 5), (1, 6)]


async def test_a_viewer_that_falls_behind_is_dropped_and_its_stream_ended() -> None:
    hub = LiveHub(queue_size=3)
    slow, keeping_up = hub.watch(7), hub.watch(7)
    ended: list[int] = []
    slow.on_drop = lambda: ended.append(7)
    for round_ in range(1, 10):
        hub.committed(7, round_)
        assert await keeping_up.next() == round_
    assert ended == [7]  # once, at the first round that did not fit
    assert hub.watching(7) == 1
    assert await slow.next() is None  # dropped: nothing more, nothing kept
    hub.leave(keeping_up)
    assert hub.watching(7) == 0
