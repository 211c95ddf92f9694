package recording

import "errors"

// Credentials authenticate to an S3-compatible service. The settings read
// into them are AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, for temporary
// credentials, AWS_SESSION_TOKEN: config reads them (S3Credentials), once,
// with every other setting.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// OpenStore returns the Store the settings name: the bucket of rawURL
// (AGENTLINE_RECORDINGS_URL, s3://bucket/prefix?endpoint=host:port&region=r&secure=false)
// when set, else the directory dir (AGENTLINE_RECORDINGS_DIR).
func OpenStore(rawURL, dir string, creds Credentials) (Store, error) {
	if rawURL != "" {
		return NewS3Store(rawURL, creds)
	}
	if dir == "" {
		return nil, errors.New("recordings: neither a directory nor an s3:// URL is set")
	}
	return NewDirStore(dir)
}
