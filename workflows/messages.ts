// Signal, query and update definitions shared by workflows and their callers,
// in one file as in the Temporal samples. (Run messages arrive with the durable-runs work.)
export {};
