"""soac.verify: soac verify's table as data; a false claim is a result, not an exception."""

import re
import shlex

import pytest

import soac
from conftest import PANDA, run_soac, soac_error, source

IDENTITIES = source("grammar", "identities.soa")


def table(printed):
    """soac verify's rows: name -> (citation, max abs, max rel, result) as printed."""
    lines = printed.splitlines()
    header = next(i for i, l in enumerate(lines) if l.startswith("identity "))
    rows = {}
    for line in lines[header + 1 :]:
        if not line.strip():
            break
        m = re.match(r"^(.*?)\s{2,}(.*?)\s+(\S+)\s+(\S+)\s+(PASS|FAIL|XFAIL|XPASS|SKIP)", line)
        rows[m.group(1).strip()] = (m.group(2).strip(), m.group(3), m.group(4), m.group(5))
    return rows


def test_identity_library_on_panda(panda):
    results = soac.verify(IDENTITIES, panda)
    assert results and all(r.passed for r in results)
    assert all(r.reproduce is None and r.message == "" for r in results)
    printed = table(run_soac("verify", IDENTITIES, "--robot", PANDA))
    assert [r.name for r in results] == list(printed)
    for r in results:
        assert (r.citation, f"{r.max_abs:.2e}", f"{r.max_rel:.2e}", r.verdict) == printed[r.name]
        assert r.robot == PANDA


def test_false_claim_is_a_fail_with_soacs_reproducer(panda):
    claim = "(I - H phi K) H psi = H phi"
    [r] = soac.verify(claim, panda, samples=4, seed=2)
    assert r.verdict == "FAIL" and not r.passed
    printed = run_soac("verify", "--robot", PANDA, "--samples", "4", "--seed", "2", claim, check=False)
    assert printed.returncode == 1
    failure = printed.stdout[printed.stdout.index(f"{claim}: FAIL") :].rstrip("\n")
    assert r.message == failure
    assert r.reproduce == failure.split("reproduce: ")[1]
    assert r.reproduce == f'soac verify --robot {PANDA} --seed {r.worst.seed} --samples 1 "{claim}"'
    # the reproducer reproduces it
    again = run_soac(*shlex.split(r.reproduce)[1:], check=False)
    assert again.returncode == 1 and f"{r.max_rel:.3e}" in again.stdout
    assert (r.statement, r.citation, r.robot) == (claim, "command line", PANDA)


def test_random_trees_like_soac():
    claims = [source("tests", "data", "soa", "false-rule.soa"), "calM^-1 = (I-HpsiK)* D^-1 (I-HpsiK)"]
    results = soac.verify(claims, samples=3, random_trees=2)
    printed = run_soac("verify", *claims, "--samples", "3", "--random-trees", "2", check=False)
    assert printed.returncode == 1
    rows = table(printed.stdout)
    assert [(r.name, r.verdict, f"{r.max_rel:.2e}") for r in results] == [(n, v[3], v[2]) for n, v in rows.items()]
    wrong = results[0]
    assert wrong.name == "INV-L-wrong" and wrong.reproduce.startswith("soac verify --random-trees 1 --seed ")
    assert wrong.message in printed.stdout
    assert results[1].passed and results[1].worst.seed >= 1


def test_tips_and_tol_reach_the_reproducer():
    robot = soac.Robot(source("examples", "robots", "ur5.urdf"), tips=["wrist_3_link"])
    [r] = soac.verify("J = B* phi* H* + J", robot, samples=1, tol=1e-6)
    assert r.verdict == "FAIL"
    assert r.reproduce.endswith(' --tip wrist_3_link --tol 1e-06 "J = B* phi* H* + J"')


def test_bad_input_raises():
    with pytest.raises(soac.Error) as e:
        soac.verify("H phi = ")
    assert str(e.value) == soac_error("verify", "H phi = ").replace("<command line>", "<expression>")
    no_identities = source("tests", "data", "soa", "no-identities.soa")
    with pytest.raises(soac.Error) as e:
        soac.verify(no_identities)
    assert str(e.value) == soac_error("verify", no_identities)
    with pytest.raises(soac.Error, match="give one of them"):
        soac.verify("calM = calM", PANDA, random_trees=2)
