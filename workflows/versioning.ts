// A workflow's versioning behavior (docs/operations.md, "Deploys"), declared only on a versioned worker: an
// unversioned one (WORKER_VERSIONING=false) must not report one, or its workflow tasks fail.
import type { WorkflowDefinitionOptions } from '@temporalio/common';
import { workflowInfo } from '@temporalio/workflow';

type Behavior = NonNullable<WorkflowDefinitionOptions['versioningBehavior']>;

/** Options for setWorkflowOptions, read when an execution starts. */
export function versioned(behavior: Behavior): () => WorkflowDefinitionOptions {
  // An unversioned worker reports a build id of its own but no deployment name.
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: behavior } : {});
}
