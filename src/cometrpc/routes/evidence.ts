/** Evidence (rpc/core/evidence.go): broadcast_evidence. */
import { invalidArgument, unsupported } from '../../lib/errors.js';
import { evidenceParam } from '../params.js';
import { route, type CometRoute } from '../route.js';

export function evidenceRoutes() {
  return {
    broadcast_evidence: route([evidenceParam('evidence')], ([ev]): never => {
      if (ev === undefined) throw invalidArgument('no evidence was provided');
      throw unsupported('failed to add evidence: ferry runs a single validator, so there is no other validator whose misbehaviour evidence could prove; evidence is not accepted');
    }),
  } satisfies Record<string, CometRoute>;
}
