// Dev server flags for the tests' and the rollout drill's servers: a build is reported drained seconds
// after its last execution closed, instead of minutes (the server's defaults, kept in production).
export const FAST_DRAINAGE_ARGS = [
  '--dynamic-config-value',
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod="3s"',
  '--dynamic-config-value',
  'matching.wv.VersionDrainageStatusRefreshInterval="2s"',
];
