package testrun

import "testing"

// A project plays at most PerProject scenarios at once in an instance;
// another project is not held back by it.
func TestPerProjectBound(t *testing.T) {
	w := NewWorker(Options{PerProject: 2})
	for i := range 2 {
		if !w.acquire(1) {
			t.Fatalf("scenario %d of project 1 was refused", i+1)
		}
	}
	if w.acquire(1) {
		t.Fatal("a third scenario of project 1 was let through")
	}
	if !w.acquire(2) {
		t.Fatal("project 2 was held back by project 1")
	}
	w.release(1)
	if !w.acquire(1) {
		t.Fatal("a freed slot of project 1 was not given again")
	}
	w.release(1)
	w.release(1)
	w.release(2)
	if len(w.playing) != 0 {
		t.Fatalf("slots left after every release: %v", w.playing)
	}
}
