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
	// The two stateful 3-chunk variants share chunk_1, chunk_2 and their
	// caches (cardbud only reconverted chunk_3), and which one a bundle is
	// may only be known once chunk_3 is loaded: they hash alike.
	fam := id.Family
	if SameCache(fam, Stateful3) {
		fam = Stateful3
	}
	blob, _ := json.Marshal(struct {
		F Family
		C string
		G Geometry
	}{fam, id.ConfigSHA256, id.Geometry})
	all := sha256.Sum256(blob)
	id.ID = hex.EncodeToString(all[:])
	return id
}
