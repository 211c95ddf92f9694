package recording

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Store keeps recordings in a bucket of any S3-compatible service (AWS,
// MinIO, R2, ...), so that instances share them and the disk does not fill.
type S3Store struct {
	client *minio.Client
	bucket string
	prefix string // "" or ending in "/"
}

// NewS3Store connects to the bucket rawURL names:
//
//	s3://bucket/prefix?endpoint=host:port&region=us-east-1&secure=false
//
// endpoint defaults to s3.amazonaws.com and secure to true. Buckets are
// addressed by path (endpoint/bucket/key), which every S3-compatible
// server accepts, and which needs no wildcard DNS for a local one. No
// request is made until the first operation.
func NewS3Store(rawURL string, creds Credentials) (*S3Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("recordings URL: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("recordings URL %q: want s3://bucket/prefix", u.Redacted())
	}
	q := u.Query()
	endpoint := q.Get("endpoint")
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	secure := true
	if s := q.Get("secure"); s != "" {
		if secure, err = strconv.ParseBool(s); err != nil {
			return nil, fmt.Errorf("recordings URL: secure=%q: %w", s, err)
		}
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken),
		Secure:       secure,
		Region:       q.Get("region"),
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, fmt.Errorf("recordings bucket: %w", err)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		if !ValidKey(prefix) {
			return nil, fmt.Errorf("recordings URL: prefix %q: %w", prefix, ErrInvalidKey)
		}
		prefix += "/"
	}
	return &S3Store{client: client, bucket: u.Host, prefix: prefix}, nil
}

// Put uploads r; S3 makes an object visible only once it is complete.
func (s *S3Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, r, size, minio.PutObjectOptions{ContentType: "audio/wav"})
	if err != nil {
		return fmt.Errorf("put recording %s: %w", key, err)
	}
	return nil
}

// Open stats the object (so that a missing key is reported here, not at the
// first read) and returns minio's Object, which seeks by issuing ranged
// GETs: a Range request fetches only the range.
func (s *S3Store) Open(ctx context.Context, key string) (Object, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.wrap("open", key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, s.wrap("open", key, err)
	}
	return &s3Object{Object: obj, info: Info{Key: key, Size: st.Size, ModTime: st.LastModified}}, nil
}

type s3Object struct {
	*minio.Object
	info Info
}

func (o *s3Object) Info() Info { return o.info }

func (s *S3Store) wrap(op, key string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return notFound(key)
	}
	return fmt.Errorf("%s recording %s: %w", op, key, err)
}

// Delete removes the object; S3 does not mind a missing one.
func (s *S3Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		return s.wrap("delete", key, err)
	}
	return nil
}

// List lists the objects under the store's prefix and prefix.
func (s *S3Store) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	err := s.each(ctx, prefix, func(info Info) error {
		out = append(out, info)
		return nil
	})
	return out, err
}

// DeleteOlderThan removes objects one by one as the listing goes. A
// bucket lifecycle rule does the same without agentline; this keeps
// retention one setting on every store.
func (s *S3Store) DeleteOlderThan(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := s.each(ctx, "", func(info Info) error {
		if !info.ModTime.Before(cutoff) {
			return nil
		}
		if err := s.client.RemoveObject(ctx, s.bucket, s.prefix+info.Key, minio.RemoveObjectOptions{}); err != nil {
			return s.wrap("delete", info.Key, err)
		}
		n++
		return nil
	})
	return n, err
}

// each calls fn for each object; keys that are not valid recording keys
// (objects put there by something else) are skipped.
func (s *S3Store) each(ctx context.Context, prefix string, fn func(Info) error) error {
	ctx, cancel := context.WithCancel(ctx) // stops the listing goroutine on an early return
	defer cancel()
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("list recordings: %w", o.Err)
		}
		key := strings.TrimPrefix(o.Key, s.prefix)
		if !ValidKey(key) {
			continue
		}
		if err := fn(Info{Key: key, Size: o.Size, ModTime: o.LastModified}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("list recordings: %w", err)
	}
	return nil
}

var _, _ Store = (*S3Store)(nil), (*DirStore)(nil)
