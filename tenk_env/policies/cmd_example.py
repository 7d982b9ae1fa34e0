"""An agent for `cmd:` in plain Python: the protocol is in tenk_env/policies/external.py.

    tenk ffa 'cmd:python -m tenk_env.policies.cmd_example'

It imports nothing of tenk: copy it anywhere and run it as ``cmd:python my_agent.py``.

It sets aside the scoring dice worth the most points, banks once the turn total reaches
BANK_AT and never takes over a piggyback. It draws no random numbers, so its games are
reproducible without a seed. Logs go to stderr: stdout carries the answers.
"""

import json
import sys

BANK_AT = 300

for line in sys.stdin:  # ends when tenk closes our stdin: then exit
    msg = json.loads(line)
    if msg["type"] != "decide":  # the hello needs no answer
        continue
    legal, state = msg["legal"], msg["state"]
    if state["phase"] == "piggyback":
        action = 129  # start fresh (128 would take over the last banker's dice)
    else:
        best = max(m["points"] for m in legal)
        top = [m for m in legal if m["points"] == best]
        bank = state["turn_total"] + best >= BANK_AT
        # bank or roll on as the total says, if the rules allow it here (entry threshold, roll limit)
        action = ([m for m in top if m["end"] == bank] or top)[0]["action"]
    print(json.dumps({"action": action}), flush=True)
