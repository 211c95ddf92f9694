package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/agentline/agentline"
)

// Store keeps finished recordings by key. A key is a relative slash path
// (see ValidKey); the same keys work on every Store, so a deployment can
// move from a directory to a bucket without renaming.
type Store interface {
	// Put stores size bytes of r under key, replacing any object there.
	// Readers never see a partial object.
	Put(ctx context.Context, key string, r io.Reader, size int64) error
	// Open returns the object for reading and seeking (http.ServeContent
	// serves Range requests from it). A missing key is agentline.ErrNotFound.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes key; removing a missing key is not an error, so that a
	// retried deletion succeeds.
	Delete(ctx context.Context, key string) error
	// List returns the objects whose keys start with prefix.
	List(ctx context.Context, prefix string) ([]Info, error)
	// DeleteOlderThan removes the objects last written before cutoff, for
	// retention, and reports how many it removed.
	DeleteOlderThan(ctx context.Context, cutoff time.Time) (int, error)
}

// Object is an open recording. Its reads and seeks use the context Open
// was given.
type Object interface {
	io.ReadSeekCloser
	Info() Info
}

// Info describes a stored recording.
type Info struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// ErrInvalidKey is returned for a key ValidKey refuses.
var ErrInvalidKey = errors.New("invalid recording key")

// ValidKey reports whether key is safe on every Store: slash-separated
// segments of letters, digits, '-', '_' and '.', none empty and none
// starting with a dot. That rules out "..", absolute paths, backslashes and
// the stores' own temporary files, so a key can never reach outside its
// directory or prefix.
func ValidKey(key string) bool {
	if key == "" || len(key) > 512 {
		return false
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg[0] == '.' {
			return false
		}
		for _, c := range []byte(seg) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				return false
			}
		}
	}
	return true
}

func checkKey(key string) error {
	if !ValidKey(key) {
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	return nil
}

func notFound(key string) error {
	return fmt.Errorf("recording %s: %w", key, agentline.NotFound("recording"))
}

// Serve answers a GET or HEAD for key with the recording, honouring Range
// (206) and conditional requests. It returns an error without writing
// anything when the recording cannot be opened (agentline.ErrNotFound when
// missing), so that the caller answers in its own error shape; once the
// answer has started it returns nil.
func Serve(w http.ResponseWriter, r *http.Request, s Store, key string) error {
	obj, err := s.Open(r.Context(), key)
	if err != nil {
		return err
	}
	defer obj.Close()
	h := w.Header()
	h.Set("Content-Type", "audio/wav")
	h.Set("Cache-Control", "private, no-store") // a person's voice
	http.ServeContent(w, r, path.Base(key), obj.Info().ModTime, obj)
	return nil
}
