package managed

import (
	"github.com/dbperf/dbperf/internal/catalog"
	"github.com/dbperf/dbperf/internal/server"
)

// Profile is a config profile dbperf can apply, with the engine it is for.
type Profile struct {
	Engine string
	server.Profile
}

// Profiles are the config profiles of every engine that has some (catalog.Engines: the
// managed servers', then the key-value engines' LSM options for dbbench), each engine's
// in name order, those in profilesDir overriding built-in ones (server.ListProfiles).
func Profiles(profilesDir string) ([]Profile, error) {
	var out []Profile
	for _, e := range catalog.Engines(catalog.EngineOptions{}) {
		eng := e.Meta().Name
		ps, err := server.ListProfiles(profilesDir, eng)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out = append(out, Profile{Engine: eng, Profile: p})
		}
	}
	return out, nil
}
