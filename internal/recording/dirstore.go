package recording

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
)

// DirStore keeps recordings as files under a directory, the default: a
// single instance needs no other service.
//
// Every operation goes through os.Root, so even a key that slipped past
// ValidKey, or a symbolic link planted in the directory, cannot reach a
// file outside it.
type DirStore struct {
	dir string
}

// tmpPrefix marks files being written; ValidKey refuses keys with a
// leading dot, so no key can name one.
const tmpPrefix = ".tmp-"

// NewDirStore uses dir, creating it if needed.
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("recordings directory: %w", err)
	}
	return &DirStore{dir: dir}, nil
}

func (d *DirStore) root() (*os.Root, error) {
	root, err := os.OpenRoot(d.dir)
	if err != nil {
		return nil, fmt.Errorf("recordings directory: %w", err)
	}
	return root, nil
}

// Put writes to a temporary file beside the target and renames it into
// place, so that readers see the old recording or the new, never part.
func (d *DirStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	root, err := d.root()
	if err != nil {
		return err
	}
	defer root.Close()
	if dir := path.Dir(key); dir != "." {
		if err := root.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("put recording %s: %w", key, err)
		}
	}
	tmp := path.Join(path.Dir(key), tmpPrefix+rand.Text())
	if err := writeFile(ctx, root, tmp, r, size); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("put recording %s: %w", key, err)
	}
	if err := root.Rename(tmp, key); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("put recording %s: %w", key, err)
	}
	return nil
}

func writeFile(ctx context.Context, root *os.Root, name string, r io.Reader, size int64) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, ctxReader{ctx, r})
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("got %d bytes, want %d", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Open opens key's file.
func (d *DirStore) Open(ctx context.Context, key string) (Object, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	root, err := d.root()
	if err != nil {
		return nil, err
	}
	defer root.Close() // the open file does not need it
	f, err := root.Open(key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(key)
	}
	if err != nil {
		return nil, fmt.Errorf("open recording %s: %w", key, err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open recording %s: %w", key, err)
	}
	return &dirObject{File: f, info: Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}}, nil
}

type dirObject struct {
	*os.File
	info Info
}

func (o *dirObject) Info() Info { return o.info }

// Delete removes key's file.
func (d *DirStore) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	root, err := d.root()
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete recording %s: %w", key, err)
	}
	return nil
}

// List walks the directory for keys starting with prefix.
func (d *DirStore) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	err := d.walk(ctx, func(_ *os.Root, info Info, tmp bool) error {
		if !tmp && strings.HasPrefix(info.Key, prefix) {
			out = append(out, info)
		}
		return nil
	})
	return out, err
}

// DeleteOlderThan also removes temporary files left by a crash in the
// middle of a Put; only recordings are counted.
func (d *DirStore) DeleteOlderThan(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := d.walk(ctx, func(root *os.Root, info Info, tmp bool) error {
		if !info.ModTime.Before(cutoff) {
			return nil
		}
		if err := root.Remove(info.Key); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete recording %s: %w", info.Key, err)
		}
		if !tmp {
			n++
		}
		return nil
	})
	return n, err
}

// walk calls fn for every recording and every temporary file (tmp); files
// with other names were not put there by a DirStore and are skipped.
func (d *DirStore) walk(ctx context.Context, fn func(root *os.Root, info Info, tmp bool) error) error {
	root, err := d.root()
	if err != nil {
		return err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
			return nil
		}
		if err != nil {
			return err
		}
		tmp := strings.HasPrefix(path.Base(p), tmpPrefix)
		if !tmp && !ValidKey(p) { // not ours: left alone
			return nil
		}
		return fn(root, Info{Key: p, Size: fi.Size(), ModTime: fi.ModTime()}, tmp)
	})
	if err != nil {
		return fmt.Errorf("list recordings: %w", err)
	}
	return nil
}
