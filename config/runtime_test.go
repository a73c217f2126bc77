package config

import "testing"

// TestServerKeys: the API key comes from the file, ORCHARD_API_KEY or
// the flag, and is never shown; the socket lives in the runtime folder.
func TestServerKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		env  map[string]string
		args []string
		key  string
	}{
		{"file", "[server]\napi_key = \"f\"\n", nil, nil, "f"},
		{"short variable", "", map[string]string{"ORCHARD_API_KEY": "e"}, nil, "e"},
		{"long variable wins", "", map[string]string{"ORCHARD_API_KEY": "e", "ORCHARD_SERVER_API_KEY": "l"}, nil, "l"},
		{"flag", "[server]\napi_key = \"f\"\n", map[string]string{"ORCHARD_API_KEY": "e"}, []string{"--api-key", "x"}, "x"},
		{"none", "", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.file, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Server.APIKey != tc.key || c.Server.Listen != "127.0.0.1:11535" {
				t.Fatalf("server %+v", c.Server)
			}
			shown := value(c, "server.api_key")
			if tc.key != "" && shown != "(set, not shown)" || tc.key == "" && shown != "" {
				t.Fatalf("show prints %v", shown)
			}
		})
	}
	c, err := load(t, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SocketFile(mapEnv(map[string]string{"XDG_RUNTIME_DIR": "/run/user/7"})); got != "/run/user/7/orchard/orchard.sock" {
		t.Fatalf("socket %s", got)
	}
	if got := c.SocketFile(mapEnv(map[string]string{"XDG_RUNTIME_DIR": "relative"})); got != c.Data.Dir+"/run/orchard.sock" {
		t.Fatalf("socket %s", got)
	}
}
