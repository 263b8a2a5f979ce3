package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/front"
	"github.com/switchboard-dev/switchboard/internal/testwait"
	"github.com/switchboard-dev/switchboard/server"
)

// peerRaw sends body to the agent's address as bob (A2A 1.0) and returns
// the answer as it came; a stream is read until its task completes.
func peerRaw(t *testing.T, m *server.Server, handle, peerToken, body string, stream bool) string {
	t.Helper()
	req, _ := http.NewRequest("POST", m.URL()+"/a/"+handle, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+peerToken)
	req.Header.Set("A2A-Version", "1.0")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !stream {
		raw, _ := io.ReadAll(resp.Body)
		return string(raw)
	}
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "TASK_STATE_COMPLETED") {
			return b.String()
		}
	}
	t.Fatalf("the stream ended before the task completed:\n%s", b.String())
	return ""
}

// getPage reads a page of the agent's address as anyone does.
func getPage(t *testing.T, m *server.Server, handle, path, accept string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", m.URL()+"/a/"+handle+path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

// showsValue returns the form of one of values that text shows (as it
// is, in base64, inside Basic user:value), or "".
func showsValue(text string, values ...string) string {
	text = html.UnescapeString(text) // a page escapes + as &#43;
	for _, v := range values {
		forms := []string{v, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawURLEncoding.EncodeToString([]byte(v))}
		if n := (len(v) - 1) / 3 * 3; n > 0 { // inside "user:…", at offset 5
			forms = append(forms, base64.StdEncoding.EncodeToString([]byte(v[1:1+n])))
		}
		for _, f := range forms {
			if strings.Contains(text, f) {
				return f
			}
		}
	}
	return ""
}

// TestFrontRemovesReflectedCredentials: an upstream that reflects the
// headers it is sent (the owner's bearer and a fixed header) into its card
// and its answers publishes none of their values through the front: not
// in the card (1.0, 0.3), the landing page (HTML and JSON), a blocking
// answer, a stream or a task read later; and front status names the
// credentials the upstream's card held in public_card_leaks.
func TestFrontRemovesReflectedCredentials(t *testing.T) {
	const bearer, header = "owner-upstream-secret-0123", "cf-secret-value-4567"
	for name, version := range map[string]string{"V1": "1.0", "V03": "0.3"} {
		t.Run(name, func(t *testing.T) {
			up := newUpstreamAgent(t, version, true, upstreamOptions{tls: true, token: bearer, reflect: true})
			m := frontMain(t, up)
			peerToken := createFront(t, m, "fronted", up.srv.URL+"/invoke")
			cliStdin(t, m, bearer+"\n", "front", "credentials", "fronted", "--bearer-stdin", "--header", "CF-Access-Client-Secret="+header)

			published := map[string]string{
				"card 1.0":      getPage(t, m, "fronted", "/.well-known/agent-card.json", ""),
				"card 0.3":      getPage(t, m, "fronted", "/.well-known/agent.json", ""),
				"landing page":  getPage(t, m, "fronted", "", "text/html"),
				"landing JSON":  getPage(t, m, "fronted", "", "application/json"),
				"blocking send": peerRaw(t, m, "fronted", peerToken, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`, false),
				"stream":        peerRaw(t, m, "fronted", peerToken, `{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"streamed"}]}}}`, true),
			}
			var sent struct {
				Result struct {
					Task struct {
						ID string `json:"id"`
					} `json:"task"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(published["blocking send"]), &sent); err != nil || sent.Result.Task.ID == "" {
				t.Fatalf("blocking send: %v %s", err, published["blocking send"])
			}
			published["task read later"] = peerRaw(t, m, "fronted", peerToken, `{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"`+sent.Result.Task.ID+`"}}`, false)
			for what, text := range published {
				if leak := showsValue(text, bearer, header); leak != "" {
					t.Errorf("the %s shows a credential (%q):\n%s", what, leak, text)
				}
			}
			for _, what := range []string{"card 1.0", "blocking send", "stream", "task read later"} {
				if !strings.Contains(published[what], front.CredentialRemoved) {
					t.Errorf("the %s does not come from the reflecting upstream:\n%s", what, published[what])
				}
			}

			var st struct {
				Leaks []string `json:"public_card_leaks"`
			}
			if err := json.Unmarshal([]byte(cli(t, m, "--json", "front", "status", "fronted")), &st); err != nil {
				t.Fatal(err)
			}
			for _, cred := range []string{"bearer", "header CF-Access-Client-Secret"} {
				if !slices.ContainsFunc(st.Leaks, func(l string) bool { return strings.HasPrefix(l, front.CredentialLeak(cred)) }) {
					t.Errorf("public_card_leaks %q does not name the %s", st.Leaks, cred)
				}
			}
			if leak := showsValue(strings.Join(st.Leaks, " "), bearer, header); leak != "" {
				t.Errorf("public_card_leaks shows a credential: %q", st.Leaks)
			}
		})
	}
}

// TestConnectForwardRemovesReflectedToken: connect --forward to a server
// that reflects the headers it is sent publishes no value of
// --forward-token in the card it publishes, nor relays one in answers.
func TestConnectForwardRemovesReflectedToken(t *testing.T) {
	const token = "forward-token-0123456789"
	m := MustRunMain(t, t.TempDir(), "")
	up := newUpstreamAgent(t, "1.0", true, upstreamOptions{token: token, reflect: true})
	id, agentToken, peerToken := connectAgent(t, m, "laptop")
	startConnect(t, m, id, "--token", agentToken, "--forward", up.srv.URL, "--forward-token", token)
	testwait.For(t, "the address to serve the forward server's card", func() bool {
		return strings.Contains(getPage(t, m, "laptop", "/.well-known/agent-card.json", ""), `"Upstream 1.0"`)
	})
	published := map[string]string{
		"card 1.0":      getPage(t, m, "laptop", "/.well-known/agent-card.json", ""),
		"card 0.3":      getPage(t, m, "laptop", "/.well-known/agent.json", ""),
		"landing page":  getPage(t, m, "laptop", "", "text/html"),
		"blocking send": peerRaw(t, m, "laptop", peerToken, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`, false),
		"stream":        peerRaw(t, m, "laptop", peerToken, `{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"streamed"}]}}}`, true),
	}
	for what, text := range published {
		if leak := showsValue(text, token); leak != "" {
			t.Errorf("the %s shows the forward token (%q):\n%s", what, leak, text)
		}
		if what != "landing page" && !strings.Contains(text, front.CredentialRemoved) {
			t.Errorf("the %s does not come from the reflecting server:\n%s", what, text)
		}
	}
}
