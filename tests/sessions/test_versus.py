"""The game service against Krigbot itself: its instant accept, and a choice left open by a stop."""

from __future__ import annotations

from krigbot.engine import Rules
from krigbot.engine.cards import card_code
from krigbot.engine.events import TopChoice
from krigbot.engine.policy import Move, choose, make
from krigbot.engine.steal import StealGame
from krigbot.sessions import GameService, Player
from krigbot.storage import GameRow, Storage
from tests.support.players import Clock

GUILD, CHANNEL = 10, 100
ALICE, BOB = Player(1, "Alice"), Player(2, "Bob")
KRIGBOT = Player(99, "Krigbot", bot=True)
TWO = Rules.preset("stjel")


def service_of(storage: Storage, clock: Clock, seed: int = 1) -> GameService:
    """Return a service that knows Krigbot's user id, on the test's clock and seed."""
    service = GameService(storage, clock=clock, seeds=lambda: seed)
    service.registry.krigbot_id = KRIGBOT.user_id
    return service


def first_top_of_krigbot() -> tuple[int, Move, int]:
    """Return a deal whose first battle Krigbot (seat 1) wins, its move, and the default top."""
    for seed in range(500):
        game = StealGame.new(TWO, seed)
        game.begin_battle()
        pending = game.pending()
        if pending and isinstance(pending[0], TopChoice) and pending[0].seat == 1:
            move = choose(game, 1)
            default = game.loot_top(1)
            assert move is not None
            assert default is not None
            if move.card != default:
                return seed, move, default
    raise AssertionError("no deal found")


async def test_a_challenge_of_krigbot_alone_is_dealt_in_the_same_call(storage: Storage) -> None:
    service = service_of(storage, Clock())

    made = await service.challenges.challenge(
        guild_id=GUILD,
        channel_id=CHANNEL,
        challenger=ALICE,
        opponents=[KRIGBOT],
        variant="standard",
        options={},
    )

    assert made.krigbot == 1
    assert made.game is not None
    assert made.row.status == "running"
    assert set(made.row.accepted) == {ALICE.user_id, KRIGBOT.user_id}
    found = await service.registry.game_in(CHANNEL)
    assert found is not None
    assert found[1] is made.game


async def test_with_other_players_krigbot_accepts_and_the_challenge_waits_for_them(
    storage: Storage,
) -> None:
    service = service_of(storage, Clock())

    made = await service.challenges.challenge(
        guild_id=GUILD,
        channel_id=CHANNEL,
        challenger=ALICE,
        opponents=[KRIGBOT, BOB],
        variant="standard",
        options={},
    )

    assert (made.krigbot, made.game, made.row.status) == (1, None, "challenge")
    assert set(made.row.accepted) == {ALICE.user_id, KRIGBOT.user_id}
    dealt = await service.challenges.accept(made.row.id, BOB.user_id)
    assert dealt.game is not None


async def stopped_before_krigbot_chose(storage: Storage, clock: Clock, seed: int) -> GameRow:
    """Deal Steal War against Krigbot and save its first battle as a bot that then stopped."""
    made = await service_of(storage, clock, seed).challenges.challenge(
        guild_id=GUILD,
        channel_id=CHANNEL,
        challenger=ALICE,
        opponents=[KRIGBOT],
        variant="stjel",
        options={},
    )
    game = StealGame.new(TWO, seed)
    game.begin_battle()
    saved = await storage.games.save_round(
        made.row.id, expected_round=0, state=game.to_dict(), round=game.round, now=clock()
    )
    assert saved
    return made.row


async def test_a_choice_krigbot_could_not_make_before_a_stop_is_made_by_its_policy_in_time(
    storage: Storage,
) -> None:
    seed, move, default = first_top_of_krigbot()
    clock = Clock()
    made = await stopped_before_krigbot_chose(storage, clock, seed)
    again = service_of(storage, clock, seed)

    early = await again.choices.time_out(CHANNEL, made.id)
    clock.advance(seconds=61)
    late = await again.choices.time_out(CHANNEL, made.id)

    assert early is not None
    assert early.krigbot_moves == ()
    assert late is not None
    assert late.timed_out == ()  # nobody's choice ran out: Krigbot made its own
    assert late.krigbot_moves == (move,)
    assert late.game.loot_top(1) == move.card != default
    assert late.game.pending() == ()
    row = await storage.games.get_game(made.id)
    assert row is not None
    assert row.state is not None
    assert row.state["actions"][-1] == ["top", 1, card_code(move.card)]


async def test_a_flip_makes_the_choice_krigbot_left_open_before_any_battle(
    storage: Storage,
) -> None:
    seed, move, _ = first_top_of_krigbot()
    clock = Clock()
    await stopped_before_krigbot_chose(storage, clock, seed)
    again = service_of(storage, clock, seed)

    first = await again.choices.begin_battle(CHANNEL, ALICE.user_id)
    second = await again.choices.begin_battle(CHANNEL, ALICE.user_id)

    assert first.krigbot_moves == (move,)
    assert first.played is None  # no battle yet: the press showed Krigbot's choice
    assert first.row.round == 1
    expected = StealGame.new(TWO, seed)
    expected.begin_battle()
    make(expected, move)
    expected.begin_battle()  # the next press begins the next battle, Krigbot choosing in it
    while (answer := choose(expected, 1)) is not None:
        make(expected, answer)
    assert second.game.to_dict() == expected.to_dict()
