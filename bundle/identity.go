package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Identity binds checkpoints to a bundle: the sha256 of the defining
// config's bytes (as corellm-chat's KV checkpoints do) plus the family and
// the geometry, hashed together into ID.
type Identity struct {
	Family       Family   `json:"family"`
	ConfigFile   string   `json:"config_file"`
	ConfigSHA256 string   `json:"config_sha256"`
	Geometry     Geometry `json:"geometry"`
	ID           string   `json:"id"`
}

func (b *Bundle) identity() Identity {
	sum := sha256.Sum256(b.configBytes)
	id := Identity{Family: b.Family, ConfigFile: b.ConfigFile, ConfigSHA256: hex.EncodeToString(sum[:]), Geometry: b.Geometry}
	blob, _ := json.Marshal(struct {
		F Family
		C string
		G Geometry
	}{id.Family, id.ConfigSHA256, id.Geometry})
	all := sha256.Sum256(blob)
	id.ID = hex.EncodeToString(all[:])
	return id
}
