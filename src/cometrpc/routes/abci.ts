/** The application (rpc/core/abci.go): abci_query, abci_info. */
import type { AppQuery } from '../backend.js';
import { infoJson, queryJson } from '../format.js';
import type { InfoJson, QueryJson } from '../jsontypes.js';
import { boolParam, hexBytesParam, int64Param, stringParam } from '../params.js';
import { route, type CometRoute } from '../route.js';

/** coretypes.ResultABCIQuery */
export interface AbciQueryResult {
  response: QueryJson;
}

/** coretypes.ResultABCIInfo */
export interface AbciInfoResult {
  response: InfoJson;
}

export function abciRoutes(app: AppQuery) {
  return {
    abci_query: route(
      [stringParam('path'), hexBytesParam('data'), int64Param('height'), boolParam('prove')],
      async ([path, data, height, prove]): Promise<AbciQueryResult> => ({ response: queryJson(await app.abciQuery({ path, data, height: height ?? 0n, prove })) }),
    ),
    abci_info: route([], (): AbciInfoResult => ({ response: infoJson(app.abciInfo()) }), { cache: 'always' }),
  } satisfies Record<string, CometRoute>;
}
