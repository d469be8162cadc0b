#!/usr/bin/env python3
"""Runs the README's energy workflow (docs/ci/energy.yml) the way a GitHub runner would:
its `run:` steps verbatim, in order, with the variables a runner sets, over a pull request
of a GPU crate that is a git repository of its own.

Two phases, as the workflow has two jobs:

  run_workflow.py build --state DIR [--calls BASE:PR]
      here (a machine with Rust, no GPU): makes the crate's repository (gate-study/, its
      `main` with CALLS=BASE, its pull request `pr` with CALLS=PR), checks the pull request
      out with its history (actions/checkout, fetch-depth 0), runs the build job's steps
      (cargo install --git … --rev …, with the harness's repository as a file URL and this
      checkout's HEAD as the pinned commit; cargo energy gate --build-only), and keeps the
      artifact (actions/upload-artifact) and the gate job's steps in DIR (no YAML needed
      there).

  run_workflow.py gate --state DIR
      on the GPU machine (no Rust, no git needed): checks the pull request out (a copy),
      downloads the artifact (copied without its executable bits, as an artifact's zip
      loses them), runs the gate job's steps, and shows what the comment action would post.

Each phase writes DIR/<phase>.log: every step, its command, its output and exit status.
GitHub checks out a pull request's merge commit; here the pull request's head is checked
out (the base is an ancestor of it, so both are the same tree).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def repo_root():
    return subprocess.check_output(["git", "-C", HERE, "rev-parse", "--show-toplevel"], text=True).strip()


class Log:
    def __init__(self, path):
        self.file = open(path, "w", encoding="utf-8")

    def say(self, text):
        print(text, flush=True)
        self.file.write(text + "\n")
        self.file.flush()

    def run(self, command, cwd, env):
        """Runs a step's script as a runner does (bash -e {0}); its output goes to the log."""
        self.say(f"$ {command.rstrip()}")
        start = time.time()
        proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        for line in proc.stdout:
            self.say("  " + line.rstrip("\n"))
        code = proc.wait()
        self.say(f"  [exit {code}, {time.time() - start:.1f} s]")
        return code


def git(cwd, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="gate study", GIT_AUTHOR_EMAIL="study@localhost",
               GIT_COMMITTER_NAME="gate study", GIT_COMMITTER_EMAIL="study@localhost")
    subprocess.check_call(["git", "-C", cwd, *args], env=env, stdout=subprocess.DEVNULL)


def set_calls(src, calls):
    path = os.path.join(src, "src", "lib.rs")
    text = open(path, encoding="utf-8").read()
    lines = [f"pub const CALLS: u32 = {calls};" if l.startswith("pub const CALLS: u32 =") else l
             for l in text.split("\n")]
    open(path, "w", encoding="utf-8").write("\n".join(lines))


def make_crate_repo(state, root, base_calls, pr_calls):
    """The user's repository: `main` (CALLS=base_calls) and `pr` (CALLS=pr_calls), pushed to
    a bare `origin`. Returns the origin's path."""
    src = os.path.join(state, "crate-src")
    origin = os.path.join(state, "origin.git")
    for d in (src, origin):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(os.path.join(HERE, "gate-study"), src)
    manifest = os.path.join(src, "Cargo.toml")
    text = open(manifest, encoding="utf-8").read().replace("HARNESS_PATH", os.path.join(root, "energy-harness"))
    open(manifest, "w", encoding="utf-8").write(text)
    shutil.copy(os.path.join(root, "Cargo.lock"), os.path.join(src, "Cargo.lock"))
    open(os.path.join(src, ".gitignore"), "w").write("/target\n/gate-build\n/energy.md\n")
    set_calls(src, base_calls)
    # The lock as cargo keeps it for this crate (the workspace's, pruned): committed so, a
    # build leaves the tree clean.
    subprocess.check_call(["cargo", "update", "--workspace", "--quiet"], cwd=src,
                          env={k: v for k, v in os.environ.items() if not k.startswith("CARGO_")})
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", f"base: {base_calls} calls per launch")
    git(src, "checkout", "-q", "-b", "pr")
    set_calls(src, pr_calls)
    git(src, "commit", "-q", "-am", f"pull request: {pr_calls} calls per launch")
    subprocess.check_call(["git", "init", "-q", "--bare", origin])
    git(src, "push", "-q", origin, "main", "pr")
    return origin


def runner_env(state, workspace, workflow_env, step_env):
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("ENERGY_") or k.startswith("CARGO_")]:
        del env[k]
    env.update({
        "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "pr", "GITHUB_WORKSPACE": workspace,
        "RUNNER_TEMP": os.path.join(state, "runner-temp"),
    })
    env.update({k: str(v) for k, v in workflow_env.items()})
    env.update({k: str(v) for k, v in (step_env or {}).items()})
    return env


def step_name(step):
    return step.get("name") or step.get("uses") or step.get("run", "").split("\n")[0]


def build(args):
    import yaml  # only the build phase reads the YAML

    root = repo_root()
    state = os.path.abspath(args.state)
    os.makedirs(state, exist_ok=True)
    log = Log(os.path.join(state, "build.log"))
    workflow = yaml.safe_load(open(os.path.join(root, "docs", "ci", "energy.yml"), encoding="utf-8"))
    head = subprocess.check_output(["git", "-C", root, "rev-parse", "HEAD"], text=True).strip()
    base_calls, pr_calls = (int(x) for x in args.calls.split(":"))
    origin = make_crate_repo(state, root, base_calls, pr_calls)
    workflow_env = dict(workflow.get("env", {}))
    workflow_env.update({"ENERGY_GIT": f"file://{root}", "ENERGY_REV": head})
    log.say(f"== build job (runs-on: {workflow['jobs']['build']['runs-on']}), here; the harness at {head}")
    log.say(f"   ENERGY_GIT={workflow_env['ENERGY_GIT']} ENERGY_REV={head} (the workflow's placeholders, set)")
    workspace = os.path.join(state, "work", "build")
    shutil.rmtree(workspace, ignore_errors=True)
    os.makedirs(os.path.join(state, "runner-temp"), exist_ok=True)
    for step in workflow["jobs"]["build"]["steps"]:
        log.say(f"-- step: {step_name(step)}")
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout"):
            depth = (step.get("with") or {}).get("fetch-depth", 1)
            subprocess.check_call(["git", "clone", "-q", "--branch", "pr", origin, workspace])
            log.say(f"  cloned the pull request `pr` with fetch-depth {depth} (origin/main is there)")
        elif uses.startswith("actions/upload-artifact"):
            w = step["with"]
            dest = os.path.join(state, "artifacts", w["name"])
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(os.path.join(workspace, w["path"]), dest)
            log.say(f"  uploaded {w['path']} as artifact `{w['name']}`")
        elif "run" in step:
            code = log.run(step["run"], workspace, runner_env(state, workspace, workflow_env, step.get("env")))
            if code != 0:
                log.say("build job FAILED")
                return code
        else:
            log.say(f"  (not emulated: {uses})")
    # The gate job's checkout: the pull request as cloned, without its .git.
    checkout = os.path.join(state, "checkout")
    shutil.rmtree(checkout, ignore_errors=True)
    shutil.copytree(workspace, checkout, ignore=shutil.ignore_patterns(".git", "gate-build", "target"))
    json.dump({"env": workflow_env, "job": workflow["jobs"]["gate"]},
              open(os.path.join(state, "gate-job.json"), "w"), indent=2)
    log.say("build job succeeded; for the gate job copy DIR to the GPU machine and run: run_workflow.py gate --state DIR")
    return 0


def gate(args):
    state = os.path.abspath(args.state)
    log = Log(os.path.join(state, "gate.log"))
    spec = json.load(open(os.path.join(state, "gate-job.json")))
    job = spec["job"]
    log.say(f"== gate job (runs-on: {job['runs-on']}, needs: {job.get('needs')}), on the GPU machine")
    workspace = os.path.join(state, "work", "gate")
    shutil.rmtree(workspace, ignore_errors=True)
    failed = False
    for step in job["steps"]:
        condition = str(step.get("if", ""))
        runs_anyway = "always()" in condition or "!cancelled()" in condition
        log.say(f"-- step: {step_name(step)}" + (f" (if: {condition})" if condition else ""))
        if failed and not runs_anyway:
            log.say("  skipped: an earlier step failed")
            continue
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout"):
            shutil.copytree(os.path.join(state, "checkout"), workspace)
            log.say("  checked out the pull request")
        elif uses.startswith("actions/download-artifact"):
            w = step["with"]
            src = os.path.join(state, "artifacts", w["name"])
            dest = os.path.join(workspace, w["path"])
            # An artifact is a zip: its files come back without their executable bits.
            shutil.copytree(src, dest, copy_function=shutil.copyfile)
            log.say(f"  downloaded artifact `{w['name']}` into {w['path']} (modes dropped, as a zip drops them)")
        elif uses.startswith("marocchino/sticky-pull-request-comment"):
            path = os.path.join(workspace, step["with"]["path"])
            if "hashFiles(" in condition and not os.path.exists(path):
                log.say("  skipped: no comment file")
                continue
            log.say(f"  the comment it would post (header `{step['with']['header']}`):")
            for line in open(path, encoding="utf-8"):
                log.say("  | " + line.rstrip("\n"))
        elif "run" in step:
            code = log.run(step["run"], workspace, runner_env(state, workspace, spec["env"], step.get("env")))
            if code != 0:
                failed = True
                log.say(f"  the step failed (exit {code}): the job fails")
        else:
            log.say(f"  (not emulated: {uses})")
    log.say("gate job " + ("FAILED" if failed else "succeeded"))
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phase", choices=["build", "gate"])
    parser.add_argument("--state", required=True, help="the folder both phases share")
    parser.add_argument("--calls", default="100:102", help="CALLS of main and of the pull request")
    args = parser.parse_args()
    sys.exit(build(args) if args.phase == "build" else gate(args))


if __name__ == "__main__":
    main()
