// Preloaded into the worker's workflow sandbox before the SDK freezes its globals
// (runtime/workflow-bundle.ts: the bundler's `preloadModules`); workflow code cannot set these later.
//
// No stack traces in the sandbox. The SDK's promise hook builds one for every promise a workflow
// creates (an Error, its frames mapped through the bundle's source map), for the `__stack_trace`
// query. A run creates hundreds of promises: that hook was a quarter of the workflow thread's CPU
// (docs/performance.md, row 11). Where a run is shows in its `state` query and current details;
// errors the workflows raise carry codes and messages that say what went wrong.
Error.stackTraceLimit = 0;

export {};
