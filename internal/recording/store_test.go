package recording

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentline/agentline"
)

// putAt puts data under key as written at the given time: each store's
// test controls its own clock (file times, the fake server's clock).
type putAt func(t *testing.T, key string, data []byte, at time.Time)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testStore is the behaviour every Store shares.
func testStore(t *testing.T, s Store, put putAt) {
	ctx := context.Background()
	data := tone(1, 10_000)
	put(t, "p1/c1.wav", tone(0, 500), t0)
	put(t, "p1/c1.wav", data, t0) // replaces
	put(t, "p1/c2.wav", tone(2, 300), t0.Add(48*time.Hour))
	put(t, "p2/c3.wav", tone(3, 300), t0.Add(48*time.Hour))

	t.Run("open and seek", func(t *testing.T) {
		obj, err := s.Open(ctx, "p1/c1.wav")
		if err != nil {
			t.Fatal(err)
		}
		defer obj.Close()
		if info := obj.Info(); info.Size != int64(len(data)) || info.Key != "p1/c1.wav" || !info.ModTime.Equal(t0) {
			t.Errorf("Info() = %+v", info)
		}
		if _, err := obj.Seek(9_000, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj)
		if err != nil || !bytes.Equal(got, data[9_000:]) {
			t.Errorf("read after seek: %d bytes, %v", len(got), err)
		}
	})
	t.Run("serve", func(t *testing.T) { testServe(t, s, data) })
	t.Run("list", func(t *testing.T) { testList(t, s) })
	t.Run("refused keys", func(t *testing.T) {
		for _, key := range badKeys {
			if err := s.Put(ctx, key, strings.NewReader("x"), 1); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Put(%q) = %v", key, err)
			}
			if _, err := s.Open(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Open(%q) = %v", key, err)
			}
			if err := s.Delete(ctx, key); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Delete(%q) = %v", key, err)
			}
		}
	})
	t.Run("short body", func(t *testing.T) {
		if err := s.Put(ctx, "p1/short.wav", bytes.NewReader(data[:10]), 100); err == nil {
			t.Error("Put with fewer bytes than size succeeded")
		}
		if _, err := s.Open(ctx, "p1/short.wav"); !errors.Is(err, agentline.ErrNotFound) {
			t.Errorf("a failed Put left an object: %v", err)
		}
	})
	t.Run("retention and delete", func(t *testing.T) { testRetention(t, s) })
}

var badKeys = []string{"", "../x.wav", "/abs.wav", "a//b.wav", "a/../../b.wav", ".tmp-x", "a/.hidden", `a\b.wav`, "a/./b", "a b.wav", "a/", strings.Repeat("a", 513)}

func testServe(t *testing.T, s Store, data []byte) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := Serve(w, r, s, r.URL.Path[1:]); errors.Is(err, agentline.ErrNotFound) {
			http.Error(w, "gone", http.StatusNotFound)
		} else if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	cases := []struct {
		name, key, rng string
		status         int
		body           []byte
		contentRange   string
	}{
		{"whole", "p1/c1.wav", "", 200, data, ""},
		{"range", "p1/c1.wav", "bytes=100-199", 206, data[100:200], "bytes 100-199/10000"},
		{"suffix", "p1/c1.wav", "bytes=-10", 206, data[9990:], "bytes 9990-9999/10000"},
		{"open end", "p1/c1.wav", "bytes=9000-", 206, data[9000:], "bytes 9000-9999/10000"},
		{"unsatisfiable", "p1/c1.wav", "bytes=20000-", 416, nil, "bytes */10000"},
		{"missing", "p1/nope.wav", "", 404, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", srv.URL+"/"+c.key, nil)
			if c.rng != "" {
				req.Header.Set("Range", c.rng)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || resp.Header.Get("Content-Range") != c.contentRange {
				t.Fatalf("status %d, Content-Range %q", resp.StatusCode, resp.Header.Get("Content-Range"))
			}
			if c.body != nil && (!bytes.Equal(body, c.body) || resp.Header.Get("Content-Type") != "audio/wav") {
				t.Errorf("body %d bytes (want %d), Content-Type %q", len(body), len(c.body), resp.Header.Get("Content-Type"))
			}
		})
	}
}

func TestDirStore(t *testing.T) {
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	testStore(t, s, func(t *testing.T, key string, data []byte, at time.Time) {
		if err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, key), at, at); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDirStoreStaysInside: a symbolic link planted in the directory does
// not lead outside it, and retention clears temporary files a crash left
// without counting or listing them.
func TestDirStoreStaysInside(t *testing.T) {
	ctx := context.Background()
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.wav")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := NewDirStore(dir)
	if err := os.Symlink(secret, filepath.Join(dir, "link.wav")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "p9")); err != nil {
		t.Fatal(err)
	}
	if obj, err := s.Open(ctx, "link.wav"); err == nil {
		obj.Close()
		t.Error("Open followed a link outside the directory")
	}
	if err := s.Put(ctx, "p9/secret.wav", strings.NewReader("x"), 1); err == nil {
		t.Error("Put wrote through a link outside the directory")
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("file outside changed: %q", b)
	}

	stale := filepath.Join(dir, ".tmp-crashed")
	os.WriteFile(stale, []byte("partial"), 0o600)
	os.Chtimes(stale, t0, t0)
	if infos, _ := s.List(ctx, ""); len(infos) != 0 {
		t.Errorf("List shows %v", infos)
	}
	if n, err := s.DeleteOlderThan(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("DeleteOlderThan = %d, %v", n, err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale temporary file kept")
	}
}

func TestValidKey(t *testing.T) {
	for _, key := range []string{"a.wav", "p1/c-2_x.wav", "2026/03/01/CA123.wav"} {
		if !ValidKey(key) {
			t.Errorf("ValidKey(%q) = false", key)
		}
	}
	for _, key := range badKeys {
		if ValidKey(key) {
			t.Errorf("ValidKey(%q) = true", key)
		}
	}
}

// TestSave: a finished recording goes into a store, and its temporary file
// is gone.
func TestSave(t *testing.T) {
	rec := newTestRecorder(t, Options{})
	rec.Caller(b64(tone(1, 160)), 0)
	res := closeRecorder(t, rec)
	s, _ := NewDirStore(t.TempDir())
	if err := res.Save(context.Background(), s, "p1/call.wav"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Path); !os.IsNotExist(err) {
		t.Error("temporary file kept after Save")
	}
	obj, err := s.Open(context.Background(), "p1/call.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	b, _ := io.ReadAll(obj)
	if w, err := parseWAV(b); err != nil || len(w.left) != 160 {
		t.Errorf("saved recording: %d samples, %v", len(w.left), err)
	}
}

func testList(t *testing.T, s Store) {
	ctx := context.Background()
	for prefix, want := range map[string][]string{
		"p1/": {"p1/c1.wav", "p1/c2.wav"}, "": {"p1/c1.wav", "p1/c2.wav", "p2/c3.wav"}, "p3": nil,
	} {
		infos, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, i := range infos {
			keys = append(keys, i.Key)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, want) {
			t.Errorf("List(%q) = %v, want %v", prefix, keys, want)
		}
	}
}

func testRetention(t *testing.T, s Store) {
	ctx := context.Background()
	n, err := s.DeleteOlderThan(ctx, t0.Add(24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("DeleteOlderThan = %d, %v; want 1", n, err)
	}
	if _, err := s.Open(ctx, "p1/c1.wav"); !errors.Is(err, agentline.ErrNotFound) {
		t.Errorf("Open of an expired recording: %v", err)
	}
	for range 2 { // a second delete of the same key succeeds too
		if err := s.Delete(ctx, "p1/c2.wav"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Open(ctx, "p1/c2.wav"); !errors.Is(err, agentline.ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
	if infos, err := s.List(ctx, ""); err != nil || len(infos) != 1 || infos[0].Key != "p2/c3.wav" {
		t.Errorf("left after retention: %v, %v", infos, err)
	}
}
