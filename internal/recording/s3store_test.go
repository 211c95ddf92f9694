package recording

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
)

// fakeClock is the S3 server's clock, set by the test between requests;
// the lock orders the test's writes with the server's reads.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// startS3 serves an in-memory S3 implementation on 127.0.0.1 and returns
// the recordings URL of bucket "recs" under prefix "calls".
func startS3(t *testing.T) (rawURL string, clock *fakeClock) {
	clock = &fakeClock{now: t0}
	backend := s3mem.New(s3mem.WithTimeSource(clock))
	if err := backend.CreateBucket("recs"); err != nil {
		t.Fatal(err)
	}
	// The skew check compares the client's real clock with the fake one.
	faker := gofakes3.New(backend, gofakes3.WithTimeSource(clock), gofakes3.WithTimeSkewLimit(0))
	srv := httptest.NewServer(faker.Server())
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return "s3://recs/calls?secure=false&region=us-east-1&endpoint=" + u.Host, clock
}

var testCreds = Credentials{AccessKeyID: "test-key", SecretAccessKey: "test-secret"}

func TestS3Store(t *testing.T) {
	rawURL, clock := startS3(t)
	s, err := OpenStore(rawURL, "", testCreds)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*S3Store); !ok {
		t.Fatalf("OpenStore gave %T", s)
	}
	testStore(t, s, func(t *testing.T, key string, data []byte, at time.Time) {
		clock.set(at)
		if err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data))); err != nil {
			t.Fatal(err)
		}
	})
}

// TestS3StorePrefix: keys live under the URL's prefix, and objects there
// that are not recordings are left alone.
func TestS3StorePrefix(t *testing.T) {
	ctx := context.Background()
	rawURL, _ := startS3(t)
	s, err := NewS3Store(rawURL, testCreds)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "p1/a.wav", bytes.NewReader([]byte("abc")), 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.StatObject(ctx, "recs", "calls/p1/a.wav", minio.StatObjectOptions{}); err != nil {
		t.Errorf("object not under the prefix: %v", err)
	}
	if _, err := s.client.PutObject(ctx, "recs", "calls/p1/.odd name", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteOlderThan(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("DeleteOlderThan = %d, %v; want 1", n, err)
	}
	if _, err := s.client.StatObject(ctx, "recs", "calls/p1/.odd name", minio.StatObjectOptions{}); err != nil {
		t.Errorf("a foreign object was removed: %v", err)
	}
}

func TestOpenStore(t *testing.T) {
	dir := t.TempDir()
	if s, err := OpenStore("", dir, Credentials{}); err != nil {
		t.Error(err)
	} else if _, ok := s.(*DirStore); !ok {
		t.Errorf("OpenStore without a URL gave %T", s)
	}
	for _, bad := range []string{"https://bucket/x", "s3:///prefix", "s3://b/p?secure=maybe", "s3://b/../x", "s3://b/%zz"} {
		if _, err := OpenStore(bad, dir, Credentials{}); err == nil {
			t.Errorf("OpenStore(%q) accepted", bad)
		}
	}
	if _, err := OpenStore("", "", Credentials{}); err == nil {
		t.Error("OpenStore with nothing set accepted")
	}
}
