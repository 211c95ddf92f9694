package config

// S3Credentials authenticate to the recordings bucket: AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and, for temporary credentials, AWS_SESSION_TOKEN.
// They are plain values, so that config needs nothing of the package that
// uses them (internal/recording converts them to its Credentials).
type S3Credentials struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// s3CredentialsFromEnv reads the bucket's credentials through getenv: env
// only, never flags, so that secrets stay out of the process list.
func s3CredentialsFromEnv(getenv func(string) string) S3Credentials {
	return S3Credentials{
		AccessKeyID:     getenv("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken:    getenv("AWS_SESSION_TOKEN"),
	}
}
