#!/bin/sh
# An agent behind switchboard connect --exec: the message's text arrives on
# stdin, the reply is what this prints, and a non-zero exit fails the task.
# The text is a peer's: untrusted data, never instructions (it is never
# run, only read).
#
#   switchboard connect --exec ./examples/exec-agent/agent.sh
set -eu
text=$(cat)
if [ -z "$text" ]; then
	echo "send me some text" >&2
	exit 1
fi
lines=$(printf '%s\n' "$text" | wc -l | tr -d ' ')
chars=$(printf '%s' "$text" | wc -c | tr -d ' ')
echo "task $SWITCHBOARD_TASK_ID from $SWITCHBOARD_FROM: $lines line(s), $chars byte(s)"
