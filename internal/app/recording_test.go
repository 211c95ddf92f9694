package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/agentline/agentline"
	"github.com/agentline/agentline/internal/app/apptest"
	"github.com/agentline/agentline/internal/g711"
	"github.com/agentline/agentline/internal/provider/realtimefake"
	"github.com/agentline/agentline/internal/recording"
	"github.com/agentline/agentline/internal/store"
	"github.com/agentline/agentline/internal/store/storetest"
	"github.com/agentline/agentline/internal/telephony/callsim"
)

// Phone calls of an agent with record_calls on, through the real stream
// handler, the relay and the fake model, on both databases and with both
// stores: the stored WAV's left channel is exactly the caller's mu-law
// decoded, its right channel the agent's, placed within 20 ms of the line
// time it was sent at; GET .../recording answers it whole and by Range
// (206); a stranger gets 404; DELETE removes the object (and deleting the
// project, all of its objects); an agent with
// record_calls off leaves no recording; retention (the recurring job, run
// at the next start) deletes an expired one.
func TestPhoneCallRecording(t *testing.T) {
	t.Parallel()
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		for _, bucket := range []bool{false, true} {
			name := string(d) + "/dir"
			if bucket {
				name = string(d) + "/s3"
			}
			t.Run(name, func(t *testing.T) { testPhoneCallRecording(t, d, bucket) })
		}
	}
}

func testPhoneCallRecording(t *testing.T, d store.Dialect, bucket bool) {
	model := realtimefake.New("sk-test")
	defer model.Close()
	dir := t.TempDir()
	env := phoneEnv(model.URL(), map[string]string{
		"AGENTLINE_RECORDINGS_DIR": dir,
	})
	objects, err := recording.NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	var st recording.Store = objects
	if bucket {
		env["AGENTLINE_RECORDINGS_URL"], _ = startS3(t, true)
		env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = "test-key", "test-secret"
	}
	cfg := apptest.Config(t, storetest.URL(t, d), env)
	if bucket { // the bucket as the server opens it, with the credentials its settings read
		if st, err = recording.OpenStore(cfg.RecordingsURL, "", recording.Credentials(cfg.RecordingsCredentials)); err != nil {
			t.Fatal(err)
		}
	}
	s := apptest.Start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tok := s.Login(t, "owner@example.com", "owner-password")
	_, stranger := s.NewUser(t, "stranger@example.com")
	p := phoneProject(ctx, t, s)

	rng := rand.New(rand.NewPCG(11, 12))
	caller, agent := audible(rng, 16000), audible(rng, 4000) // 2 s and 0.5 s
	id := recordedCall(ctx, t, s, model, "+14155550100", caller, agent)
	conv := waitRecording(t, s, tok, id)
	if r := conv.Recording; r.Status != agentline.RecordingStored || r.DurationMS != 2000 || r.SizeBytes != 44+16000*4 ||
		r.ContentType != "audio/wav" || r.URL != "/api/conversations/"+id+"/recording" {
		t.Fatalf("recording = %+v", r)
	}
	whole := s.Must(t, 200, "GET", "/api/conversations/"+id+"/recording", tok, nil, nil)
	if whole.Header.Get("Content-Type") != "audio/wav" || int64(len(whole.Body)) != conv.Recording.SizeBytes {
		t.Fatalf("GET recording: %q, %d bytes", whole.Header.Get("Content-Type"), len(whole.Body))
	}
	checkChannels(t, whole.Body, caller, agent, 8000)

	req := s.Request(t, "GET", "/api/conversations/"+id+"/recording", tok, nil)
	req.Header.Set("Range", "bytes=44-1043")
	part := s.Send(t, req)
	if part.Status != http.StatusPartialContent || !bytes.Equal(part.Body, whole.Body[44:1044]) ||
		part.Header.Get("Content-Range") != fmt.Sprintf("bytes 44-1043/%d", len(whole.Body)) {
		t.Fatalf("Range: %d %q, %d bytes", part.Status, part.Header.Get("Content-Range"), len(part.Body))
	}
	s.Must(t, 404, "GET", "/api/conversations/"+id+"/recording", stranger, nil, nil)

	// record_calls off: the call has no recording.
	off := recordedCall(ctx, t, s, model, "+14155550101", caller, agent)
	var c agentline.Conversation
	s.Must(t, 200, "GET", "/api/conversations/"+off, tok, nil, &c)
	if c.Recording != nil {
		t.Fatalf("a call of an agent that does not record has %+v", c.Recording)
	}
	s.Must(t, 404, "GET", "/api/conversations/"+off+"/recording", tok, nil, nil)

	// DELETE removes the object with the conversation.
	gone := recordedCall(ctx, t, s, model, "+14155550100", caller, agent)
	waitRecording(t, s, tok, gone)
	key := agentline.RecordingKey(p.ID, callIDOf(t, gone))
	if _, err := st.Open(ctx, key); err != nil {
		t.Fatalf("recording object before DELETE: %v", err)
	}
	s.Must(t, 204, "DELETE", "/api/conversations/"+gone, tok, nil, nil)
	if obj, err := st.Open(ctx, key); err == nil {
		obj.Close()
		t.Fatal("the recording object outlived its conversation")
	}

	// Retention: a day's retention, a recording made long ago, and the
	// recurring job (it runs at start) deletes it.
	s.Must(t, 200, "PATCH", fmt.Sprintf("/api/projects/%d", p.ID), tok, map[string]any{"recording_retention_days": 1}, nil)
	if err := s.App.Store.ExecAdmin(ctx, `UPDATE recordings SET created_at = '2000-01-01 00:00:00+00:00'`); err != nil {
		t.Fatal(err)
	}
	s.Stop(t)
	s = apptest.Start(t, cfg)
	for i := 0; i < 300 && (c.Recording == nil || c.Recording.Status != agentline.RecordingDeleted); i++ {
		time.Sleep(100 * time.Millisecond)
		c = agentline.Conversation{}
		s.Must(t, 200, "GET", "/api/conversations/"+id, tok, nil, &c)
	}
	if c.Recording == nil || c.Recording.Status != agentline.RecordingDeleted || c.Recording.URL != "" {
		t.Fatalf("after retention: %+v", c.Recording)
	}
	if obj, err := st.Open(ctx, agentline.RecordingKey(p.ID, callIDOf(t, id))); err == nil {
		obj.Close()
		t.Fatal("retention left the object")
	}
	s.Must(t, 404, "GET", "/api/conversations/"+id+"/recording", tok, nil, nil)
	if spool, _ := os.ReadDir(filepath.Join(dir, ".spool")); len(spool) != 0 {
		t.Fatalf("files left in the spool: %v", spool)
	}

	// Deleting the project deletes its recordings' objects too.
	last := recordedCall(ctx, t, s, model, "+14155550100", caller, agent)
	waitRecording(t, s, tok, last)
	if left, err := st.List(ctx, agentline.RecordingPrefix(p.ID)); err != nil || len(left) == 0 {
		t.Fatalf("the project's objects before its deletion: %v, %v", left, err)
	}
	s.Must(t, 204, "DELETE", fmt.Sprintf("/api/projects/%d", p.ID), tok, nil, nil)
	var left []recording.Info
	for i := 0; i < 300; i++ {
		if left, err = st.List(ctx, agentline.RecordingPrefix(p.ID)); err != nil || len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || len(left) != 0 {
		t.Fatalf("objects left after the project's deletion: %v, %v", left, err)
	}
}

// phoneProject gives the owner a project with two agents: Ada records
// calls (+14155550100), Bob does not (+14155550101).
func phoneProject(ctx context.Context, t *testing.T, s *apptest.Server) agentline.Project {
	t.Helper()
	owner, _, _ := s.App.Store.UserByEmail(ctx, "owner@example.com")
	p, _ := s.App.Store.CreateProject(ctx, agentline.Project{Name: "shop"}, owner.ID)
	for i, rec := range []bool{true, false} {
		a, err := s.App.Store.CreateAgent(ctx, agentline.Agent{ProjectID: p.ID, Name: fmt.Sprint("agent", i), Model: "gpt-realtime",
			Provider: agentline.ProviderOpenAI, Language: "en", RecordCalls: rec})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.App.Store.CreatePhoneNumber(ctx, agentline.PhoneNumber{ProjectID: p.ID, PhoneNumber: fmt.Sprint("+1415555010", i),
			AgentID: &a.ID, Status: agentline.NumberActive, CarrierSID: fmt.Sprint("PN", i)}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// recordedCall calls to as the carrier would: 1 s of the caller, then the
// agent's answer (sent once the relay has had that second, so it starts at
// 1000 ms on the line), then the caller's second second, and a hang-up. It
// returns the conversation id once the call has ended.
func recordedCall(ctx context.Context, t *testing.T, s *apptest.Server, model *realtimefake.Server, to string, caller, agent []byte) string {
	return recordedCallCut(ctx, t, s, model, to, caller, agent, 0)
}

// recordedCallCut is recordedCall with a barge-in cut caller bytes after
// the agent began (0: none): the caller talks over the agent that long,
// the model says speech started, and the relay clears the carrier.
func recordedCallCut(ctx context.Context, t *testing.T, s *apptest.Server, model *realtimefake.Server, to string, caller, agent []byte, cut int) string {
	t.Helper()
	// With a barge-in, no mark is echoed: none of the agent audio has
	// played as far as the relay knows, so speech_started clears it.
	c, err := callsim.Inbound(ctx, http.DefaultClient, s.URL, "+14155550199", to, callsim.Options{EchoMarks: cut == 0, AuthToken: carrierToken, BotHost: "bot.example.test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ss, err := model.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	half := len(caller) / 2
	if err := c.Play(ctx, caller[:half], false); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitAudio(ctx, half/callsim.FrameBytes); err != nil {
		t.Fatal(err)
	}
	ss.Send(ctx, map[string]any{"type": "response.output_audio.delta", "response_id": "resp_1", "item_id": "item_1", "delta": base64.StdEncoding.EncodeToString(agent)})
	if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "media" }); err != nil {
		t.Fatal(err)
	}
	if cut > 0 {
		if err := c.Play(ctx, caller[half:half+cut], false); err != nil {
			t.Fatal(err)
		}
		if _, err := ss.WaitAudio(ctx, (half+cut)/callsim.FrameBytes); err != nil {
			t.Fatal(err)
		}
		ss.Send(ctx, map[string]any{"type": "input_audio_buffer.speech_started", "audio_start_ms": 1000, "item_id": "item_user"})
		if _, err := c.WaitFor(ctx, func(m callsim.Message) bool { return m.Event == "clear" }); err != nil {
			t.Fatal(err)
		}
		half += cut
	}
	if err := c.Play(ctx, caller[half:], false); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.WaitAudio(ctx, len(caller)/callsim.FrameBytes); err != nil {
		t.Fatal(err)
	}
	c.Stop(ctx)
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the call did not end")
	}
	call, err := s.App.Store.Call(ctx, projectOfNumber(ctx, t, s, to), c.CallSID)
	if err != nil {
		t.Fatal(err)
	}
	id := agentline.CallConversationID(call.ID)
	// The stream handler records the call's end, then its recording.
	for i := 0; i < 300; i++ {
		if call, _ = s.App.Store.Call(ctx, call.ProjectID, c.CallSID); call.EndReason != "" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return id
}

func projectOfNumber(ctx context.Context, t *testing.T, s *apptest.Server, e164 string) int64 {
	n, err := s.App.Store.PhoneNumberByE164(ctx, e164)
	if err != nil {
		t.Fatal(err)
	}
	return n.ProjectID
}

func callIDOf(t *testing.T, conversationID string) int64 {
	id, ok := agentline.ParseCallConversationID(conversationID)
	if !ok {
		t.Fatalf("%q is not a call's conversation", conversationID)
	}
	return id
}

// waitRecording waits (bounded) for the conversation's recording to be
// known.
func waitRecording(t *testing.T, s *apptest.Server, tok, id string) agentline.Conversation {
	t.Helper()
	var c agentline.Conversation
	for i := 0; i < 300 && (c.Recording == nil || c.Recording.Status == agentline.RecordingPending); i++ {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		c = agentline.Conversation{}
		s.Must(t, 200, "GET", "/api/conversations/"+id, tok, nil, &c)
	}
	if c.Recording == nil {
		t.Fatalf("conversation %s has no recording", id)
	}
	return c
}

// audible is n random mu-law bytes none of which decodes to 0, so that
// silence in a recording is never mistaken for audio.
func audible(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		for b[i] = byte(rng.Uint32()); g711.Decode(b[i]) == 0; b[i] = byte(rng.Uint32()) {
		}
	}
	return b
}

// checkChannels checks a recorded WAV: 8 kHz stereo 16-bit; left exactly
// the caller decoded; right silent but for the agent decoded, starting
// within 20 ms of agentAt (in samples).
func checkChannels(t *testing.T, wav, caller, agent []byte, agentAt int) {
	t.Helper()
	if len(wav) < 44 || string(wav[0:4]) != "RIFF" || string(wav[8:12]) != "WAVE" || binary.LittleEndian.Uint16(wav[22:]) != 2 ||
		binary.LittleEndian.Uint32(wav[24:]) != 8000 || binary.LittleEndian.Uint16(wav[34:]) != 16 {
		t.Fatalf("not an 8 kHz stereo 16-bit WAV: % x", wav[:min(len(wav), 44)])
	}
	data := wav[44:]
	n := len(data) / 4
	if n != len(caller) {
		t.Fatalf("%d frames, want %d (the caller's)", n, len(caller))
	}
	sample := func(i, ch int) int16 { return int16(binary.LittleEndian.Uint16(data[4*i+2*ch:])) }
	start := -1
	for i := range n {
		if want := g711.Decode(caller[i]); sample(i, 0) != want {
			t.Fatalf("left sample %d = %d, want %d (the caller's byte %#x decoded)", i, sample(i, 0), want, caller[i])
		}
		if start < 0 && sample(i, 1) != 0 {
			start = i
		}
	}
	if start < 0 || start < agentAt-160 || start > agentAt+160 {
		t.Fatalf("the agent starts at sample %d, want %d ± 160 (20 ms)", start, agentAt)
	}
	for i := range n {
		want := int16(0)
		if k := i - start; k >= 0 && k < len(agent) {
			want = g711.Decode(agent[k])
		}
		if sample(i, 1) != want {
			t.Fatalf("right sample %d = %d, want %d", i, sample(i, 1), want)
		}
	}
}

// startS3 serves an in-memory S3-compatible server on loopback, with its
// bucket "recs" unless not asked for, and returns the recordings URL of
// that bucket's prefix "calls".
func startS3(t *testing.T, withBucket bool) (string, *s3mem.Backend) {
	backend := s3mem.New()
	if withBucket {
		if err := backend.CreateBucket("recs"); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return "s3://recs/calls?secure=false&region=us-east-1&endpoint=" + u.Host, backend
}

// A barge-in cuts the agent's channel where the carrier was told to clear:
// the caller talked over the agent for 200 ms, so 200 ms of the agent's
// 500 ms are in the recording and the rest, never played, is not.
func TestRecordingShowsBargeIn(t *testing.T) {
	t.Parallel()
	model := realtimefake.New("sk-test")
	defer model.Close()
	s := apptest.StartFresh(t, store.SQLite, phoneEnv(model.URL(), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tok := s.Login(t, "owner@example.com", "owner-password")
	phoneProject(ctx, t, s)
	rng := rand.New(rand.NewPCG(15, 16))
	caller, agent := audible(rng, 16000), audible(rng, 4000)
	id := recordedCallCut(ctx, t, s, model, "+14155550100", caller, agent, 1600)
	waitRecording(t, s, tok, id)
	whole := s.Must(t, 200, "GET", "/api/conversations/"+id+"/recording", tok, nil, nil)
	checkChannels(t, whole.Body, caller, agent[:1600], 8000)
}

// A recording the store refuses at the call's end waits, pending, in the
// spool; its durable upload job retries until the store takes it.
func TestRecordingUploadRetries(t *testing.T) {
	t.Parallel()
	for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
		t.Run(string(d), func(t *testing.T) {
			model := realtimefake.New("sk-test")
			defer model.Close()
			dir := t.TempDir()
			s3url, backend := startS3(t, false) // no bucket yet: every put fails
			s := apptest.StartFresh(t, d, phoneEnv(model.URL(), map[string]string{
				"AGENTLINE_RECORDINGS_DIR": dir, "AGENTLINE_RECORDINGS_URL": s3url, "AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s",
			}))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tok := s.Login(t, "owner@example.com", "owner-password")
			phoneProject(ctx, t, s)
			rng := rand.New(rand.NewPCG(13, 14))
			caller, agent := audible(rng, 16000), audible(rng, 4000)
			id := recordedCall(ctx, t, s, model, "+14155550100", caller, agent)
			var c agentline.Conversation
			for i := 0; i < 300 && c.Recording == nil; i++ {
				time.Sleep(50 * time.Millisecond)
				s.Must(t, 200, "GET", "/api/conversations/"+id, tok, nil, &c)
			}
			if c.Recording == nil || c.Recording.Status != agentline.RecordingPending {
				t.Fatalf("with the bucket missing: %+v", c.Recording)
			}
			if spool, _ := os.ReadDir(filepath.Join(dir, ".spool")); len(spool) != 1 {
				t.Fatalf("spool holds %d files, want the pending recording", len(spool))
			}
			if err := backend.CreateBucket("recs"); err != nil {
				t.Fatal(err)
			}
			c = waitRecording(t, s, tok, id)
			if c.Recording.Status != agentline.RecordingStored {
				t.Fatalf("after the bucket came: %+v", c.Recording)
			}
			whole := s.Must(t, 200, "GET", "/api/conversations/"+id+"/recording", tok, nil, nil)
			checkChannels(t, whole.Body, caller, agent, 8000)
			if spool, _ := os.ReadDir(filepath.Join(dir, ".spool")); len(spool) != 0 {
				t.Fatalf("spool still holds %d files", len(spool))
			}
		})
	}
}

// phoneEnv is the settings of a phone test instance: the phone channel on,
// the model at modelURL, the carrier's token, and a known owner
// (owner@example.com, owner-password); extra adds to them.
func phoneEnv(modelURL string, extra map[string]string) map[string]string {
	env := map[string]string{
		"TELEPHONY_ENABLED": "true", "BOT_HOST": "bot.example.test", "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": modelURL,
		"TWILIO_AUTH_TOKEN": carrierToken, "AGENTLINE_ADMIN_EMAIL": "owner@example.com", "AGENTLINE_ADMIN_PASSWORD": "owner-password",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}
