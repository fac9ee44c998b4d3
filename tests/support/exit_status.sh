#!/usr/bin/env bash
# exit_status.sh COMMAND...: runs COMMAND with its stdout and stderr as they are, then prints
# "salasim-test: exit status N". A ctest PASS_REGULAR_EXPRESSION ignores the exit status, so the CLI tests match
# this line too: a message alone cannot pass a test whose command exited with the wrong code.
# Exit code 77 ("skipped": a test whose tool is missing here) is passed on, for ctest's SKIP_RETURN_CODE.
"$@" 2>&1
rc=$?
echo "salasim-test: exit status $rc"
[ "$rc" = 77 ] && exit 77
exit 0
