package googleauth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	calsyncd "github.com/calsyncd/calsyncd"
	"github.com/calsyncd/calsyncd/internal/gcalwriter"
	"github.com/calsyncd/calsyncd/internal/googleauth"
)

func TestServiceAccountJWTExchange(t *testing.T) {
	tests := map[string]struct {
		yaml    string
		account string
		subject string
		// list: loaded for calsyncd calendars, which also asks for
		// ListScope (a sync never does: a delegation may not allow it).
		list bool
	}{
		"shared calendars": {
			yaml: "state_dir: state\ngoogle:\n  credentials_file: sa.json\n",
		},
		"domain-wide delegation": {
			yaml:    "state_dir: state\naccounts:\n  - name: work\n    credentials_file: sa.json\n    impersonate: alice@example.com\n",
			account: "work", subject: "alice@example.com",
		},
		"listing calendars with domain-wide delegation": {
			yaml:    "state_dir: state\naccounts:\n  - name: work\n    credentials_file: sa.json\n    impersonate: alice@example.com\n",
			account: "work", subject: "alice@example.com", list: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			cfg, _ := setup(t, map[string]string{"config.yaml": tc.yaml, "sa.json": oauth.serviceAccountKey()})
			creds, err := googleauth.Load(context.Background(), cfg, tc.account, googleauth.Options{ListCalendars: tc.list})
			if err != nil {
				t.Fatal(err)
			}
			scopes := googleauth.Scopes
			if tc.list {
				scopes = append(scopes[:len(scopes):len(scopes)], googleauth.ListScope)
			}
			if creds.Kind != googleauth.KindServiceAccount || creds.Email != saEmail || creds.Subject != tc.subject || creds.ClientID != saClientID {
				t.Errorf("identity = %+v", creds.Identity)
			}
			if creds.QuotaUser() != tc.subject {
				t.Errorf("QuotaUser = %q, want %q", creds.QuotaUser(), tc.subject)
			}
			tok, err := creds.TokenSource.Token()
			if err != nil || tok.AccessToken != "sa-access-1" {
				t.Fatalf("Token = %v, %v", tok, err)
			}
			// Cached: one exchange serves many requests.
			if _, err := creds.TokenSource.Token(); err != nil || len(oauth.assertions) != 1 {
				t.Fatalf("exchanges = %d, %v", len(oauth.assertions), err)
			}
			claims := oauth.assertions[0]
			if claims["iss"] != saEmail || claims["aud"] != oauth.tokenURL() || claims["scope"] != strings.Join(scopes, " ") {
				t.Errorf("claims = %v", claims)
			}
			sub, _ := claims["sub"].(string)
			if sub != tc.subject {
				t.Errorf("sub = %q, want %q", sub, tc.subject)
			}
			if !strings.Contains(creds.Identity.String(), saEmail) || (tc.subject != "" && !strings.Contains(creds.Identity.String(), tc.subject)) {
				t.Errorf("Identity.String() = %q", creds.Identity.String())
			}
		})
	}
}

func TestServiceAccountRefused(t *testing.T) {
	tests := map[string]struct {
		impersonate string
		body        string
		wantHint    string
	}{
		"service account deleted": {
			body:     `{"error":"invalid_grant","error_description":"Invalid grant: account not found"}`,
			wantHint: "create a new key for " + saEmail,
		},
		"key deleted": {
			body:     `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`,
			wantHint: "create a new key for " + saEmail,
		},
		"delegation not authorised": {
			impersonate: "alice@example.com",
			body:        `{"error":"unauthorized_client","error_description":"Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested."}`,
			wantHint:    "Domain-wide delegation) add client id " + saClientID,
		},
		"impersonated user unknown": {
			impersonate: "nobody@example.com",
			body:        `{"error":"invalid_grant","error_description":"Invalid email or User ID"}`,
			wantHint:    "impersonated user nobody@example.com",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			oauth := newFakeOAuth(t)
			oauth.failWith(400, tc.body)
			yaml := "state_dir: state\ngoogle:\n  credentials_file: sa.json\n"
			if tc.impersonate != "" {
				yaml += "  impersonate: " + tc.impersonate + "\n"
			}
			cfg, _ := setup(t, map[string]string{"config.yaml": yaml, "sa.json": oauth.serviceAccountKey()})
			creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = creds.TokenSource.Token()
			var aerr *googleauth.Error
			if !errors.As(err, &aerr) || !strings.Contains(err.Error(), tc.wantHint) {
				t.Fatalf("err = %v, want a *googleauth.Error saying %q", err, tc.wantHint)
			}
			// The jwt package leaves ErrorCode empty; the body was read.
			if want, _, _ := strings.Cut(strings.TrimPrefix(tc.body, `{"error":"`), `"`); aerr.Reason != want {
				t.Errorf("Reason = %q, want %q", aerr.Reason, want)
			}
			if c := gcalwriter.ClassifyAt(err, time.Now()); c.Class != calsyncd.ClassAuth {
				t.Errorf("class = %q, want auth", c.Class)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("err leaks the key: %v", err)
			}
		})
	}
}

func TestLoadFailuresSayWhatToDo(t *testing.T) {
	oauth := newFakeOAuth(t)
	tests := map[string]struct {
		files   map[string]string
		account string
		wantOp  string
		want    []string
	}{
		"missing key file": {
			files:  map[string]string{"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: gone.json\n"},
			wantOp: "read credentials", want: []string{"gone.json", "does not exist"},
		},
		"no credentials and no emulator": {
			files:  map[string]string{"config.yaml": "state_dir: state\n"},
			wantOp: "load", want: []string{"credentials_file is not set", "Authorising calsyncd"},
		},
		"not JSON": {
			files:  map[string]string{"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: k.json\n", "k.json": "-----BEGIN PRIVATE KEY-----\nsecret\n"},
			wantOp: "read credentials", want: []string{"not valid JSON"},
		},
		"unsupported kind": {
			files:  map[string]string{"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: k.json\n", "k.json": `{"type":"external_account","credential_source":{"url":"http://x"}}`},
			wantOp: "read credentials", want: []string{"external_account", "Desktop app"},
		},
		"never logged in": {
			files:  map[string]string{"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n", "client.json": oauth.desktopClient()},
			wantOp: "read token", want: []string{"no token at", "token-default.json", "run `calsyncd auth login --config "},
		},
		"never logged in, named account": {
			files: map[string]string{
				"config.yaml": "state_dir: state\naccounts:\n  - name: work\n    credentials_file: client.json\n", "client.json": oauth.desktopClient(),
			},
			account: "work",
			wantOp:  "read token", want: []string{"token-work.json", "--account work`"},
		},
		"token without refresh token": {
			files: map[string]string{
				"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n", "client.json": oauth.desktopClient(),
				"state/token-default.json": `{"access_token":"ya29.only"}`,
			},
			wantOp: "read token", want: []string{"holds no refresh token", "auth login"},
		},
		"impersonating with an OAuth client": {
			files: map[string]string{
				"config.yaml": "state_dir: state\ngoogle:\n  credentials_file: client.json\n  impersonate: a@example.com\n", "client.json": oauth.desktopClient(),
			},
			wantOp: "read credentials", want: []string{"impersonate needs a service-account key"},
		},
		"unknown account": {
			files:   map[string]string{"config.yaml": "state_dir: state\n"},
			account: "nope", wantOp: "load", want: []string{"no such account"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, _ := setup(t, tc.files)
			creds, err := googleauth.Load(context.Background(), cfg, tc.account, googleauth.Options{})
			var aerr *googleauth.Error
			if creds != nil || !errors.As(err, &aerr) || aerr.Op != tc.wantOp {
				t.Fatalf("Load = %v, %v; want a *googleauth.Error from %q", creds, err, tc.wantOp)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "ya29") {
				t.Errorf("err leaks a secret: %v", err)
			}
		})
	}
}

func TestEmulatorWithoutCredentials(t *testing.T) {
	cfg, _ := setup(t, map[string]string{"config.yaml": "state_dir: state\ngoogle:\n  endpoint: http://127.0.0.1:9/calendar/v3/\n"})
	creds, err := googleauth.Load(context.Background(), cfg, "", googleauth.Options{})
	if err != nil || creds.Kind != googleauth.KindNone || creds.TokenSource != nil {
		t.Fatalf("Load = %+v, %v", creds, err)
	}
}
