"""soac.derive: the goldens soac derive is held to, the steps as data, errors as soac's."""

import shlex
import warnings

import pytest

import soac
from conftest import PANDA, run_soac, soac_error, source


def goldens():
    with open(source("tests", "golden", "derive.list"), encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, args = (part.strip() for part in line.split("|", 1))
            yield pytest.param(name, shlex.split(args), id=name)


def robot_of(options):
    """The soac.Robot a golden's --robot, --object, --weld and --grasp options describe (None
    without --robot; paths relative to the source tree, as goldens.sh runs soac there), and
    the other options."""
    given, rest, key = {}, [], None
    for word in options:
        if word in ("--robot", "--object", "--weld", "--grasp"):
            key = word
        elif key in ("--robot", "--object"):
            given[key[2:]], key = word, None
        elif key in ("--weld", "--grasp") and not word.startswith("--"):
            given.setdefault("welds" if key == "--weld" else "grasps", []).append(word)
        else:
            key = None
            rest.append(word)
    if "robot" not in given:
        return None, rest
    with warnings.catch_warnings():  # Baxter's mimic joints
        warnings.simplefilter("ignore")
        return soac.Robot(given.pop("robot"), **given), rest


@pytest.mark.parametrize("name,args", goldens())
def test_golden(name, args, monkeypatch):
    expression, options = args[0], args[1:]
    monkeypatch.chdir(source())
    robot, options = robot_of(options)
    fmt = options[options.index("--format") + 1] if "--format" in options else "text"
    assert set(options) <= {"--check", "--format", fmt}, options
    d = soac.derive(expression, robot, check="--check" in options)
    text = {"text": str, "latex": soac.Derivation.latex, "json": soac.Derivation.json}[fmt](d)
    with open(source("tests", "golden", "derive", name), encoding="utf-8") as f:
        assert text == f.read()


def test_steps_as_data():
    d = soac.derive("J calM^-1 J*", check=True)
    assert d.rules == ["MINV", "def-J", "L4-adjoint", "def-J", "L4"]
    first = d.steps[0]
    assert (first.rule, first.citation) == ("MINV", "001 Identity 6, 002 Lemma 3")
    assert first.before == "J [ℳ⁻¹] J*" and first.part == "ℳ⁻¹"
    assert first.after == "J (I - K* ψ* H*) D⁻¹ (I - H ψ K) J*"
    assert first.cost == "O(N), 4 sweeps, 302 flops/body, 2 opaque"
    assert d.steps[2].part == "φ* H* (I - K* ψ* H*)"  # factors of a product
    assert d.final == "B* ψ* H* D⁻¹ H ψ B" and d.final_ascii == "B* psi* H* D^-1 H psi B"
    assert (d.cost.order, d.cost.sweeps, d.input_cost.order) == (1, 2, 3)
    assert d.check.passed and d.check.failed_step is None and len(d.check.step_max_rel) == 5
    assert all(s.max_rel is not None and s.max_rel < 1e-12 for s in d.steps)
    assert soac.derive("J calM^-1 J*").check is None


def test_check_on_a_robot_is_soacs(panda):
    d = soac.derive("calM^-1 (T - C)", panda, check=True, samples=2, seed=4)
    assert str(d) == run_soac("derive", "calM^-1 (T - C)", "--robot", PANDA, "--check", "--samples", "2", "--seed", "4")
    assert d.check.robot == PANDA


def test_renderings():
    d = soac.derive("calM^-1 J* f0", check=True)
    latex = d._repr_latex_()
    assert latex.startswith("$$\\begin{aligned}") and "\\underline{" in latex and "\\end{aligned}$$" in latex
    assert latex.count("\\rightarrow") == len(d.steps)
    html = d._repr_html_()
    assert html == d.html() and html.lstrip().startswith("<!DOCTYPE html>")
    assert html == run_soac("derive", "calM^-1 J* f0", "--check", "--format", "html")


def test_bad_expression_is_soacs_message():
    with pytest.raises(soac.Error) as e:
        soac.derive("H phi $ K")
    # soac's message and caret, the text named <expression> instead of <command line>
    cli = run_soac("derive", "H phi $ K", check=False)
    assert cli.returncode == 2
    message, *detail = cli.stderr.splitlines()
    assert str(e.value) == message.replace("<command line>", "<expression>")
    assert str(e.value).startswith("<expression>:1:7: error: ")
    assert e.value.detail.splitlines() == detail


def test_bad_shape_and_unknown_symbol():
    with pytest.raises(soac.Error, match=r"^<expression>:1:1: error: "):
        soac.derive("H + M")
    with pytest.raises(soac.Error) as e:
        soac.derive("calM^-1 (T - nope)")
    assert str(e.value) == soac_error("derive", "calM^-1 (T - nope)").replace("<command line>", "<expression>")


def test_library_file():
    with pytest.raises(soac.Error, match="no-such.soa"):
        soac.derive("calM", library="no-such.soa")
