"""Settings from the environment and .env: what is read, what is refused, what is never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from krigbot.config import PROJECT, ConfigError, Settings, Shards

TOKEN = "MTIz.secret-token-value"


@pytest.fixture
def no_env_file(tmp_path: Path) -> Path:
    """Return where a .env file would be, with none there."""
    return tmp_path / ".env"


def load(env: dict[str, str], env_file: Path) -> Settings:
    """Load with ``env_file`` as the project's .env (the project is its folder)."""
    return Settings.load(env, folder=env_file.parent)


def test_only_the_token_is_needed_and_everything_else_has_a_default(no_env_file: Path) -> None:
    settings = load({"DISCORD_TOKEN": TOKEN}, no_env_file)

    project = no_env_file.parent
    assert settings == Settings(token=TOKEN, db_path=project / "data" / "krig.db")
    assert settings.db_path == project / "data" / "krig.db"
    assert settings.dev_guild is None
    assert settings.log_level == "INFO"
    assert (settings.idle_hours, settings.challenge_seconds, settings.choice_seconds) == (
        24.0,
        300.0,
        60.0,
    )


def test_every_setting_is_read_from_the_environment(no_env_file: Path) -> None:
    settings = load(
        {
            "DISCORD_TOKEN": f"  {TOKEN}\n",
            "KRIG_DB": " /srv/krig/games.db ",
            "KRIG_DEV_GUILD": " 123456789012345678 ",
            "LOG_LEVEL": "debug",
            "KRIG_IDLE_HOURS": "12.5",
            "KRIG_CHALLENGE_SECONDS": "90",
            "KRIG_CHOICE_SECONDS": "0.5",
        },
        no_env_file,
    )

    assert settings == Settings(
        token=TOKEN,
        db_path=Path("/srv/krig/games.db"),
        dev_guild=123456789012345678,
        log_level="DEBUG",
        idle_hours=12.5,
        challenge_seconds=90.0,
        choice_seconds=0.5,
    )


def test_the_env_file_fills_in_what_the_environment_does_not_set(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        f"# from .env.example\nDISCORD_TOKEN={TOKEN}\nKRIG_IDLE_HOURS=6\nLOG_LEVEL=WARNING\n",
        encoding="utf-8",
    )

    settings = load({"LOG_LEVEL": "ERROR"}, env_file)

    assert settings.token == TOKEN
    assert settings.idle_hours == 6.0
    assert settings.log_level == "ERROR"  # the environment wins


def test_a_missing_token_says_how_to_get_one(no_env_file: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load({}, no_env_file)

    assert "DISCORD_TOKEN is not set" in str(error.value)
    assert ".env.example" in str(error.value)
    assert "Reset Token" in str(error.value)


@pytest.mark.parametrize("token", ["", "   "])
def test_an_empty_token_in_the_environment_says_it_is_empty_and_where_to_paste_it(
    no_env_file: Path, token: str
) -> None:
    with pytest.raises(ConfigError) as error:
        load({"DISCORD_TOKEN": token}, no_env_file)

    said = str(error.value)
    assert "DISCORD_TOKEN is empty in the environment" in said
    assert "paste your bot's token right after DISCORD_TOKEN=" in said
    assert "/etc/krigbot/krigbot.env" in said  # where the service's environment comes from
    assert "Reset Token" in said


def test_an_empty_token_in_the_env_file_names_the_file(tmp_path: Path) -> None:
    # .env.example copied as it is: the line is there, with nothing after the "=".
    env_file = tmp_path / ".env"
    env_file.write_text("DISCORD_TOKEN=\nLOG_LEVEL=INFO\n", encoding="utf-8")

    with pytest.raises(ConfigError) as error:
        load({}, env_file)

    said = str(error.value)
    assert f"DISCORD_TOKEN is empty in {env_file}" in said
    assert "not set" not in said


def test_the_token_never_shows_when_settings_are_printed_or_logged(no_env_file: Path) -> None:
    settings = load({"DISCORD_TOKEN": TOKEN, "KRIG_CHALLENGE_SECONDS": "42"}, no_env_file)

    for shown in (repr(settings), str(settings), f"{settings}", f"{settings!r}"):
        assert TOKEN not in shown
        assert "token=<hidden>" in shown
        assert "challenge_seconds=42.0" in shown


def test_an_unknown_log_level_is_refused_with_the_choices(no_env_file: Path) -> None:
    with pytest.raises(ConfigError, match="LOG_LEVEL must be one of DEBUG, INFO, WARNING"):
        load({"DISCORD_TOKEN": TOKEN, "LOG_LEVEL": "verbose"}, no_env_file)


@pytest.mark.parametrize("guild", ["my-server", "12e5", "-1"])
def test_a_dev_guild_that_is_not_a_server_id_is_refused(no_env_file: Path, guild: str) -> None:
    with pytest.raises(ConfigError, match="KRIG_DEV_GUILD must be a server id"):
        load({"DISCORD_TOKEN": TOKEN, "KRIG_DEV_GUILD": guild}, no_env_file)


def test_a_blank_dev_guild_means_a_global_sync(no_env_file: Path) -> None:
    assert load({"DISCORD_TOKEN": TOKEN, "KRIG_DEV_GUILD": " "}, no_env_file).dev_guild is None


@pytest.mark.parametrize(
    "key", ["KRIG_IDLE_HOURS", "KRIG_CHALLENGE_SECONDS", "KRIG_CHOICE_SECONDS"]
)
@pytest.mark.parametrize(
    ("value", "complaint"),
    [
        ("five", "must be a number"),
        ("nan", "must be a number"),
        ("inf", "must be a number"),
        ("1e400", "must be a number"),
        ("0", "must be greater than 0"),
        ("-3", "must be greater than 0"),
        ("1e12", "must be at most"),
    ],
)
def test_a_duration_that_is_not_a_usable_positive_number_is_refused(
    no_env_file: Path, key: str, value: str, complaint: str
) -> None:
    with pytest.raises(ConfigError, match=f"{key} {complaint}"):
        load({"DISCORD_TOKEN": TOKEN, key: value}, no_env_file)


@pytest.mark.parametrize(
    "key", ["KRIG_IDLE_HOURS", "KRIG_CHALLENGE_SECONDS", "KRIG_CHOICE_SECONDS"]
)
def test_a_blank_duration_keeps_its_default(no_env_file: Path, key: str) -> None:
    settings = load({"DISCORD_TOKEN": TOKEN, key: ""}, no_env_file)
    assert settings == Settings(token=TOKEN, db_path=no_env_file.parent / "data" / "krig.db")


WEB_SECRET = "web-secret-0123456789-abcdef"


def test_the_web_view_is_off_unless_a_port_is_set(no_env_file: Path) -> None:
    settings = load({"DISCORD_TOKEN": TOKEN}, no_env_file)
    assert (settings.web_port, settings.web_url, settings.web_secret) == (None, None, None)
    assert settings.web_host == "127.0.0.1"


def test_the_web_view_is_read_with_its_address_and_secret(no_env_file: Path) -> None:
    settings = load(
        {
            "DISCORD_TOKEN": TOKEN,
            "KRIG_WEB_PORT": "8080",
            "KRIG_WEB_HOST": "0.0.0.0",
            "KRIG_WEB_URL": "https://krig.example.org/",
            "KRIG_WEB_SECRET": WEB_SECRET,
        },
        no_env_file,
    )
    assert settings.web_port == 8080
    assert settings.web_host == "0.0.0.0"
    assert settings.web_url == "https://krig.example.org"  # the links add their own "/"
    assert settings.web_secret == WEB_SECRET


@pytest.mark.parametrize("secret", [None, "", "   ", "too-short"])
def test_a_web_port_without_a_strong_secret_is_refused(
    no_env_file: Path, secret: str | None
) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "KRIG_WEB_PORT": "8080"}
    if secret is not None:
        env["KRIG_WEB_SECRET"] = secret
    with pytest.raises(ConfigError, match="KRIG_WEB_SECRET must be too"):
        load(env, no_env_file)


@pytest.mark.parametrize("port", ["0", "65536", "http", "-1", "80.5"])
def test_a_web_port_that_is_no_port_is_refused(no_env_file: Path, port: str) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "KRIG_WEB_PORT": port, "KRIG_WEB_SECRET": WEB_SECRET}
    with pytest.raises(ConfigError, match="KRIG_WEB_PORT must be a port number"):
        load(env, no_env_file)


@pytest.mark.parametrize("url", ["krig.example.org", "ftp://krig.example.org", "https://"])
def test_a_web_address_that_is_no_address_is_refused(no_env_file: Path, url: str) -> None:
    with pytest.raises(ConfigError, match="KRIG_WEB_URL must be the web view's address"):
        load({"DISCORD_TOKEN": TOKEN, "KRIG_WEB_URL": url}, no_env_file)


def test_the_web_secret_never_shows_when_settings_are_printed(no_env_file: Path) -> None:
    settings = load(
        {"DISCORD_TOKEN": TOKEN, "KRIG_WEB_PORT": "8080", "KRIG_WEB_SECRET": WEB_SECRET},
        no_env_file,
    )
    for shown in (repr(settings), str(settings), f"{settings!r}"):
        assert WEB_SECRET not in shown
        assert "web_secret=<hidden>" in shown
        assert "web_port=8080" in shown


def test_a_relative_database_path_is_inside_the_project_wherever_the_bot_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "krigbot"
    project.mkdir()
    (project / ".env").write_text(f"DISCORD_TOKEN={TOKEN}\nKRIG_DB=games/krig.db\n")
    monkeypatch.chdir(tmp_path)  # started from elsewhere, as a service manager does

    settings = Settings.load({}, folder=project)

    assert settings.token == TOKEN
    assert settings.db_path == project / "games" / "krig.db"


def test_an_absolute_or_home_database_path_is_kept(no_env_file: Path) -> None:
    given = load({"DISCORD_TOKEN": TOKEN, "KRIG_DB": "/srv/krig.db"}, no_env_file)
    home = load({"DISCORD_TOKEN": TOKEN, "KRIG_DB": "~/krig.db"}, no_env_file)
    memory = load({"DISCORD_TOKEN": TOKEN, "KRIG_DB": ":memory:"}, no_env_file)

    assert given.db_path == Path("/srv/krig.db")
    assert home.db_path == Path.home() / "krig.db"
    assert str(memory.db_path) == ":memory:"


def test_a_missing_token_says_where_it_was_looked_for(no_env_file: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load({}, no_env_file)

    assert str(no_env_file) in str(raised.value)


def test_the_project_is_the_folder_of_bot_py() -> None:
    assert (PROJECT / "bot.py").is_file()
    # KRIG_DB blank: a .env of the checkout's own may set it, and the environment wins.
    settings = Settings.load({"DISCORD_TOKEN": TOKEN, "KRIG_DB": ""})
    assert settings.db_path == PROJECT / "data" / "krig.db"


def test_a_postgresql_url_chooses_postgresql_and_its_password_stays_hidden() -> None:
    settings = Settings.load(
        {"DISCORD_TOKEN": "t", "KRIG_DATABASE_URL": " postgresql://krig:s3cret@db/krig "},
        folder="/nowhere",
    )
    assert settings.database == "postgresql://krig:s3cret@db/krig"
    assert settings.database_name == "postgresql://krig:***@db/krig"
    assert "s3cret" not in repr(settings)


def test_without_a_database_url_the_sqlite_file_is_the_database() -> None:
    settings = Settings.load({"DISCORD_TOKEN": "t", "KRIG_DATABASE_URL": ""}, folder="/nowhere")
    assert settings.database == settings.db_path == Path("/nowhere/data/krig.db")


def test_a_database_url_that_is_not_postgresql_is_refused() -> None:
    with pytest.raises(ConfigError, match="KRIG_DATABASE_URL must be a PostgreSQL URL"):
        Settings.load({"DISCORD_TOKEN": "t", "KRIG_DATABASE_URL": "mysql://x/y"}, folder="/")


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("KRIG_WEB_PORT", "¹", "KRIG_WEB_PORT must be a port number"),
        ("KRIG_WEB_PORT", "٨٠٨٠", "KRIG_WEB_PORT must be a port number"),
        ("KRIG_METRICS_PORT", "９０９０", "KRIG_METRICS_PORT must be a port number"),
        ("KRIG_RENDER_PROCESSES", "²", "KRIG_RENDER_PROCESSES must be a whole number"),
        ("KRIG_DEV_GUILD", "¹²³", "KRIG_DEV_GUILD must be a server id"),
        ("KRIG_SHARD_COUNT", "³", "KRIG_SHARD_COUNT must be the number of shards"),
        ("KRIG_SHARDS", "0-¹", "KRIG_SHARDS must list shard ids"),
        ("KRIG_SHARDS", "١", "KRIG_SHARDS must list shard ids"),
        ("KRIG_CHOICE_SECONDS", "٣٠", "KRIG_CHOICE_SECONDS must be a number"),
        ("KRIG_REST_SHARE", "٠.٥", "KRIG_REST_SHARE must be this process's part"),
    ],
)
def test_a_number_written_in_other_than_ascii_digits_is_a_settings_error(
    no_env_file: Path, key: str, value: str, said: str
) -> None:
    # str.isdigit() says yes to superscripts and other scripts' digits, which int() then
    # refuses with a traceback or reads as a number nobody typed on purpose.
    env = {"DISCORD_TOKEN": TOKEN, "KRIG_WEB_SECRET": WEB_SECRET, key: value}
    if key == "KRIG_SHARDS":
        env["KRIG_SHARD_COUNT"] = "2"
    with pytest.raises(ConfigError, match=said) as raised:
        load(env, no_env_file)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("value", "on"), [("", True), ("on", True), (" OFF ", False)])
def test_card_emojis_are_on_unless_turned_off(no_env_file: Path, value: str, on: bool) -> None:
    settings = load({"DISCORD_TOKEN": TOKEN, "KRIG_CARD_EMOJIS": value}, no_env_file)

    assert settings.card_emojis is on


def test_card_emojis_other_than_on_or_off_are_refused(no_env_file: Path) -> None:
    with pytest.raises(ConfigError, match="KRIG_CARD_EMOJIS must be on or off, not 'no'"):
        load({"DISCORD_TOKEN": TOKEN, "KRIG_CARD_EMOJIS": "no"}, no_env_file)


def test_auto_shards_are_refused_on_sqlite_in_one_line(no_env_file: Path) -> None:
    env = {"DISCORD_TOKEN": TOKEN, "KRIG_SHARD_COUNT": "4", "KRIG_SHARDS": "auto"}
    with pytest.raises(ConfigError, match="KRIG_SHARDS=auto needs PostgreSQL") as raised:
        load(env, no_env_file)
    assert "\n" not in str(raised.value)


def test_auto_shards_on_postgresql_hold_none_until_claimed(no_env_file: Path) -> None:
    env = {
        "DISCORD_TOKEN": TOKEN,
        "KRIG_SHARD_COUNT": "4",
        "KRIG_SHARDS": " AUTO ",
        "KRIG_DATABASE_URL": "postgresql://krig@db/krig",
    }
    settings = load(env, no_env_file)

    assert settings.shards == Shards(4, (), auto=True)
    assert not settings.shards.owns(1 << 22)
    assert str(settings.shards) == "shards claimed with leases (auto) of 4"
    assert settings.shards.holding((3, 1)).owns(1 << 22)


def test_an_activity_is_read_with_the_web_view_it_shows(no_env_file: Path) -> None:
    web = {"KRIG_WEB_PORT": "8080", "KRIG_WEB_URL": "https://krig.example.org"}
    env = {"DISCORD_TOKEN": TOKEN, "KRIG_WEB_SECRET": WEB_SECRET, **web}
    assert load(env, no_env_file).activity is False
    assert load({**env, "KRIG_ACTIVITY": "on"}, no_env_file).activity is True
    for missing in web:
        without = {key: value for key, value in env.items() if key != missing}
        with pytest.raises(ConfigError, match=f"KRIG_ACTIVITY=on needs {missing}"):
            load({**without, "KRIG_ACTIVITY": "on"}, no_env_file)
