package config

import (
	"errors"
	"slices"
	"testing"
)

// TestServerGuardKeys: the allowed hosts, origins and aliases come from
// the file as arrays and from variables and flags as comma-separated
// lists (origins hold colons); ORCHARD_ORIGINS is the short variable;
// bad names are refused naming the key.
func TestServerGuardKeys(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		file                    string
		env                     map[string]string
		args                    []string
		hosts, origins, aliases []string
		strict                  bool
	}{
		{"defaults", "", nil, nil, []string{}, []string{}, []string{}, false},
		{"file", "[server]\nallowed_hosts = [\"Mac.LAN.\", \"*.example.com\"]\norigins = [\"http://localhost:3000/\"]\naliases = [\"gpt-4o\", \"Gemma\"]\nstrict_sampling = true\n",
			nil, nil, []string{"mac.lan", "*.example.com"}, []string{"http://localhost:3000"}, []string{"gpt-4o", "Gemma"}, true},
		{"short variable", "", map[string]string{"ORCHARD_ORIGINS": "http://localhost:3000, app://obsidian.md"}, nil,
			[]string{}, []string{"http://localhost:3000", "app://obsidian.md"}, []string{}, false},
		{"long variable wins", "", map[string]string{"ORCHARD_ORIGINS": "http://a:1", "ORCHARD_SERVER_ORIGINS": "http://b:2"}, nil,
			[]string{}, []string{"http://b:2"}, []string{}, false},
		{"flags", "[server]\norigins = [\"http://a:1\"]\n", nil, []string{"--origins", "https://*.example.com,*", "--allowed-hosts", "10.0.0.5", "--aliases", "llama3", "--strict-sampling"},
			[]string{"10.0.0.5"}, []string{"https://*.example.com", "*"}, []string{"llama3"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.file, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			s := c.Server
			if !slices.Equal(s.AllowedHosts, tc.hosts) || !slices.Equal(s.Origins, tc.origins) || !slices.Equal(s.Aliases, tc.aliases) || s.StrictSampling != tc.strict {
				t.Fatalf("server %+v", s)
			}
		})
	}
	for _, tc := range []struct{ key, file string }{
		{"server.origins", "[server]\norigins = [\"localhost:3000\"]\n"},
		{"server.origins", "[server]\norigins = [\"http://localhost:3000/path\"]\n"},
		{"server.allowed_hosts", "[server]\nallowed_hosts = [\"http://mac.lan\"]\n"},
		{"server.allowed_hosts", "[server]\nallowed_hosts = [\"mac.lan:11535\"]\n"},
		{"server.aliases", "[server]\naliases = [\"two words\"]\n"},
		{"server.aliases", "[server]\naliases = [1]\n"},
	} {
		_, err := load(t, tc.file, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%q: %v, want an error naming %s", tc.file, err, tc.key)
		}
	}
}
