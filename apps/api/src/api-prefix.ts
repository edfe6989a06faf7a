/** Route prefix of the REST contract. */
export const API_PREFIX = '/api/v1/workflows';
