package agentline

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"time"
)

// User is an account that signs in to the management API. An account
// belongs to its holder and to the instance's administrators (Admin): no
// project role reaches its password or its memberships.
type User struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Admin     bool      `json:"admin"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
}

// UserChange is what an instance administrator changes of an account; nil
// leaves a field as it is.
type UserChange struct {
	Admin    *bool `json:"admin"`
	Disabled *bool `json:"disabled"`
}

// Project groups agents, channels and numbers; users reach it through a role.
type Project struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Branding Branding `json:"branding"`
	// RecordingRetentionDays is how long call recordings are kept; 0 keeps
	// them until the conversation is deleted.
	RecordingRetentionDays int       `json:"recording_retention_days"`
	CreatedAt              time.Time `json:"created_at"`
	UpdatedAt              time.Time `json:"updated_at"`
	// Role is the calling user's role in the project, filled by the API.
	Role Role `json:"role,omitempty"`
}

// Branding is what a project shows its visitors in the widget.
type Branding struct {
	DisplayName string `json:"display_name,omitempty"`
	LogoURL     string `json:"logo_url,omitempty"`
}

// Member is a user's role in a project.
type Member struct {
	ProjectID int64     `json:"project_id"`
	UserID    int64     `json:"user_id"`
	Email     string    `json:"email"`
	Role      Role      `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

// Permission is what a request needs on a project.
type Permission string

// The three project permissions of the spec.
const (
	PermView   Permission = "PROJECT:VIEW"
	PermCreate Permission = "PROJECT:CREATE"
	PermDelete Permission = "PROJECT:DELETE"
)

// Role is a user's standing in one project.
type Role string

// Roles. Owners also manage members (which needs PROJECT:DELETE).
const (
	RoleOwner  Role = "owner"
	RoleEditor Role = "editor"
	RoleViewer Role = "viewer"
)

// Valid reports whether r is one of the three roles.
func (r Role) Valid() bool {
	return r == RoleOwner || r == RoleEditor || r == RoleViewer
}

// Can reports whether the role grants p.
func (r Role) Can(p Permission) bool {
	switch p {
	case PermView:
		return r.Valid()
	case PermCreate:
		return r == RoleOwner || r == RoleEditor
	case PermDelete:
		return r == RoleOwner
	}
	return false
}

// Permissions lists what the role grants, for display.
func (r Role) Permissions() []Permission {
	var out []Permission
	for _, p := range []Permission{PermView, PermCreate, PermDelete} {
		if r.Can(p) {
			out = append(out, p)
		}
	}
	return out
}

// Provider is the kind of realtime voice service an agent runs on.
type Provider string

// Provider kinds.
const (
	ProviderOpenAI Provider = "openai"
	ProviderGemini Provider = "gemini"
)

// Agent is a voice agent: what it says and which model says it.
type Agent struct {
	ID           int64    `json:"id"`
	ProjectID    int64    `json:"project_id"`
	Name         string   `json:"name"`
	Instructions string   `json:"instructions"`
	Greeting     string   `json:"greeting"`
	Model        string   `json:"model"`
	Provider     Provider `json:"provider"`
	Voice        string   `json:"voice"`
	Language     string   `json:"language"`
	// TransferNumber is where the agent may transfer phone calls (its
	// transfer_call tool); empty offers no transfer.
	TransferNumber string `json:"transfer_number"`
	// RecordCalls records the agent's phone calls (both sides, stereo WAV).
	// Off by default: callers may have to be told they are recorded.
	RecordCalls bool `json:"record_calls"`
	// Analysis says what is learned from each conversation once it ends.
	Analysis AnalysisSettings `json:"analysis"`
	// Version is the latest version of the agent's settings (what the
	// editor shows), PublishedVersion the one channels, numbers and
	// campaigns run; 0 for an agent not saved since versions began.
	Version          int `json:"version"`
	PublishedVersion int `json:"published_version"`
	// ReviewBeforePublish keeps saves as drafts until one is published;
	// off, every save publishes.
	ReviewBeforePublish bool `json:"review_before_publish"`
	// Running is the version whose settings this value holds when the
	// store read it to run a conversation (PublishedAgent, AgentAtVersion);
	// 0 otherwise. Conversations record it as their agent_version.
	Running   int       `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// modelProviders is the one table that derives an agent's provider from its
// model name. Order matters: the first matching pattern wins.
var modelProviders = []struct {
	pattern  *regexp.Regexp
	display  string
	provider Provider
}{
	{regexp.MustCompile(`^gpt-realtime`), "gpt-realtime*", ProviderOpenAI},
	{regexp.MustCompile(`^gpt-4o.*-realtime`), "gpt-4o*-realtime*", ProviderOpenAI},
	{regexp.MustCompile(`^gemini-.*(live|native-audio)`), "gemini-*live* or gemini-*native-audio*", ProviderGemini},
}

// ProviderForModel derives the provider kind from a model name, or returns an
// invalid_request error naming the accepted patterns.
func ProviderForModel(model string) (Provider, error) {
	m := strings.ToLower(strings.TrimSpace(model))
	for _, mp := range modelProviders {
		if mp.pattern.MatchString(m) {
			return mp.provider, nil
		}
	}
	names := make([]string, len(modelProviders))
	for i, mp := range modelProviders {
		names[i] = mp.display
	}
	return "", Invalid("model", "unknown model %q: accepted models match %s", model, strings.Join(names, ", "))
}

// defaultVoices is each provider's voice for agents created without one.
var defaultVoices = map[Provider]string{ProviderOpenAI: "marin", ProviderGemini: "Puck"}

// DefaultVoices returns each provider's voice for agents created without
// one. It is a copy: a caller changing it changes no agent's default.
func DefaultVoices() map[Provider]string { return maps.Clone(defaultVoices) }

// DefaultModel is used when an agent is created without a model.
const DefaultModel = "gpt-realtime"

// languageTag is a loose BCP 47 check: a 2-3 letter language, then subtags.
var languageTag = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$`)

// ValidLanguage reports whether s looks like a BCP 47 language tag.
func ValidLanguage(s string) bool { return languageTag.MatchString(s) }

// Validate checks the agent's fields and derives its provider.
func (a *Agent) Validate() error {
	a.Name = strings.TrimSpace(a.Name)
	if a.Name == "" {
		return Invalid("name", "name is required")
	}
	if len(a.Name) > 200 {
		return Invalid("name", "name is longer than 200 characters")
	}
	if len(a.Instructions) > 100_000 {
		return Invalid("instructions", "instructions are longer than 100000 characters")
	}
	if len(a.Greeting) > 2_000 {
		return Invalid("greeting", "greeting is longer than 2000 characters")
	}
	if a.Model == "" {
		a.Model = DefaultModel
	}
	p, err := ProviderForModel(a.Model)
	if err != nil {
		return err
	}
	a.Provider = p
	if a.Voice == "" {
		a.Voice = defaultVoices[p]
	}
	if len(a.Voice) > 100 {
		return Invalid("voice", "voice is longer than 100 characters")
	}
	if a.Language == "" {
		a.Language = "en"
	}
	if !ValidLanguage(a.Language) {
		return Invalid("language", "language %q is not a BCP 47 tag such as en or en-US", a.Language)
	}
	if a.TransferNumber != "" && !ValidE164(a.TransferNumber) {
		return Invalid("transfer_number", "transfer_number must be a phone number in E.164 form, such as +14155550100, or empty")
	}
	return a.Analysis.Validate()
}

// String is used in logs.
func (a *Agent) String() string { return fmt.Sprintf("agent %d (%s)", a.ID, a.Name) }
