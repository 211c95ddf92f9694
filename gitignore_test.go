package agentline_test

import (
	"os/exec"
	"testing"
)

// What `make run` leaves in the working tree (the SQLite database and its
// WAL files, the recordings beside it with their spool, the built binary)
// is ignored by git, so a newcomer's `git status` stays clean and no
// recording of a call is committed by accident.
func TestGitIgnoresLocalState(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	if exec.Command(git, "rev-parse", "--is-inside-work-tree").Run() != nil {
		t.Skip("not in a git work tree")
	}
	for _, p := range []string{"agentline.db", "agentline.db-wal", "recordings/p1/call_1.wav", "recordings/.spool/call-1.wav", "bin/agentline", "encryption.key"} {
		// check-ignore exits 0 when the path is ignored, 1 when it is not.
		if err := exec.Command(git, "check-ignore", "-q", "--no-index", p).Run(); err != nil {
			t.Errorf("%s is not ignored by .gitignore (git check-ignore: %v)", p, err)
		}
	}
}
