"""``spindle submit`` takes its options before, between or after the cluster id and the program, and
everything after ``--`` is the program's arguments, verbatim — every form the README documents."""
import pytest

from spindle_client.cli import parse_args


def submitted(*argv: str) -> tuple[str, str, list[str], list[str], bool]:
    args = parse_args(["submit", *argv])
    return args.cluster_id, args.main, args.file, args.args, args.wait


@pytest.mark.parametrize("argv, expected", [
    # the README's CLI section: spindle submit <id> wordcount.py [--file lib.py] --wait -- <args>
    (["c1", "wordcount.py", "--wait", "--", "in.txt", "3"], ("c1", "wordcount.py", [], ["in.txt", "3"], True)),
    (["c1", "wordcount.py", "--file", "lib.py", "--wait", "--", "in.txt"],
     ("c1", "wordcount.py", ["lib.py"], ["in.txt"], True)),
    (["c1", "main.py", "--file", "lib.py", "--wait", "--", "a", "b"], ("c1", "main.py", ["lib.py"], ["a", "b"], True)),
    # the README's engine section: spindle submit <cluster-id> my_driver.py --file reducer.cpp --wait
    (["c1", "my_driver.py", "--file", "reducer.cpp", "--wait"], ("c1", "my_driver.py", ["reducer.cpp"], [], True)),
    # nothing after --
    (["c1", "main.py", "--wait", "--"], ("c1", "main.py", [], [], True)),
    # options first (the only form that used to work)
    (["--wait", "--file", "lib.py", "c1", "main.py", "a", "b"], ("c1", "main.py", ["lib.py"], ["a", "b"], True)),
    # options between the positionals, and after the program's arguments (no --)
    (["c1", "--file", "lib.py", "main.py", "--wait"], ("c1", "main.py", ["lib.py"], [], True)),
    (["c1", "main.py", "a", "b", "--wait"], ("c1", "main.py", [], ["a", "b"], True)),
    (["c1", "main.py", "--wait", "a", "b"], ("c1", "main.py", [], ["a", "b"], True)),
    # several files, no --wait
    (["c1", "main.py", "--file", "a.py", "--file", "b.so", "--", "x"],
     ("c1", "main.py", ["a.py", "b.so"], ["x"], False)),
])
def test_every_documented_form_parses(argv, expected):
    assert submitted(*argv) == expected


def test_arguments_after_the_double_dash_are_verbatim():
    assert submitted("c1", "main.py", "--wait", "--", "-n", "3", "--wait", "--file", "x", "--", "-")[3] == [
        "-n", "3", "--wait", "--file", "x", "--", "-"]


def test_arguments_before_and_after_the_double_dash_are_kept_in_order():
    assert submitted("c1", "main.py", "a", "--wait", "--", "-b")[3] == ["a", "-b"]


def test_global_options_before_the_command_are_kept():
    args = parse_args(["--consul-url", "http://consul:8500", "submit", "c1", "main.py", "--json", "--", "-v"])
    assert (args.consul_url, args.json, args.args) == ("http://consul:8500", True, ["-v"])


def test_a_double_dash_of_another_command_is_argparse_s_own():
    assert parse_args(["show", "--", "c1"]).cluster_id == "c1"
    assert parse_args(["jobs", "c1", "--json", "j-1"]).job_id == "j-1"


@pytest.mark.parametrize("argv", [["c1"], ["c1", "main.py", "--file"], ["--", "c1", "main.py"]])
def test_incomplete_command_lines_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(["submit", *argv])
    assert exited.value.code == 2 and "usage: spindle submit" in capsys.readouterr().err
