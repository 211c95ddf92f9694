package recording

import "errors"

// Credentials authenticate to an S3-compatible service. The settings read
// into them are AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, for temporary
// credentials, AWS_SESSION_TOKEN.
type Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// CredentialsFromEnv reads Credentials through getenv (os.Getenv in main),
// so that tests can pass their own.
func CredentialsFromEnv(getenv func(string) string) Credentials {
	return Credentials{
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
	}
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
